/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Tenancy is what a cluster admin lets GitRepositories do: the identity
// their applies (and the FlinkDeployments and snapshots of what they
// apply) use, and where they may write.
type Tenancy struct {
	// DefaultServiceAccount (--default-service-account) is impersonated,
	// in the GitRepository's own namespace, when spec.serviceAccountName
	// is empty.
	DefaultServiceAccount string
	// RequireServiceAccount (--require-service-account) refuses a
	// GitRepository that names no ServiceAccount when there is no default:
	// nothing is ever applied with the controller's own identity.
	RequireServiceAccount bool
	// ClusterWideNamespaces (--cluster-wide-namespaces) lists the
	// namespaces whose GitRepositories may apply into other namespaces and
	// cluster-scoped objects ("*": every namespace). A GitRepository of any
	// other namespace writes only namespaced objects of its own namespace.
	ClusterWideNamespaces []string
	// ApplierAccounts (--allowed-applier-accounts) lists the
	// ServiceAccounts a GitRepository may name in spec.serviceAccountName
	// (DefaultServiceAccount always may be used), FlinkAccounts
	// (--allowed-flink-accounts) those a FlinkBlueGreenDeployment's jobs
	// may run as (spec.template.spec.serviceAccount; empty is the
	// namespace's default account). "*" allows any; nil, any (no check).
	// Any account of a namespace is otherwise a tenant's for the naming,
	// as a ServiceAccount token Secret would be.
	ApplierAccounts, FlinkAccounts []string
	// Ingress is what the Ingress of a FlinkBlueGreenDeployment may say.
	Ingress IngressPolicy
}

// ErrAccountNotAllowed: a ServiceAccount outside the lists of Tenancy.
var ErrAccountNotAllowed = errors.New("ServiceAccount not allowed")

// allowed reports whether list allows account.
func allowed(list []string, account string) bool {
	return list == nil || slices.Contains(list, "*") || slices.Contains(list, account)
}

// flinkAccount refuses a job's ServiceAccount outside FlinkAccounts.
func (t Tenancy) flinkAccount(account string) error {
	if account == "" || allowed(t.FlinkAccounts, account) {
		return nil
	}
	return fmt.Errorf("%w: serviceAccount %q is not one a job may run as (--allowed-flink-accounts: %s)",
		ErrAccountNotAllowed, account, strings.Join(t.FlinkAccounts, ","))
}

// serviceAccount returns the ServiceAccount gr's applies impersonate in
// gr's namespace; "" means the controller's own identity.
func (t Tenancy) serviceAccount(gr *v1alpha1.GitRepository) (string, error) {
	sa := gr.Spec.ServiceAccountName
	switch {
	case sa != "" && sa != t.DefaultServiceAccount && !allowed(t.ApplierAccounts, sa):
		return "", fmt.Errorf("%w: spec.serviceAccountName %s is not one a GitRepository may apply as (--allowed-applier-accounts: %s); "+
			"a cluster admin lists it there, or leave it empty for %s", ErrAccountNotAllowed, sa, strings.Join(t.ApplierAccounts, ","), orNoneAccount(t.DefaultServiceAccount))
	case sa != "":
		return sa, nil
	case t.DefaultServiceAccount != "":
		return t.DefaultServiceAccount, nil
	case t.RequireServiceAccount:
		return "", fmt.Errorf("spec.serviceAccountName is required: this controller applies nothing with its own identity (--require-service-account); "+
			"name a ServiceAccount of namespace %s that may write the repository's objects", gr.Namespace)
	}
	return "", nil
}

// confined reports whether GitRepositories of namespace ns may write only
// namespaced objects of ns.
func (t Tenancy) confined(ns string) bool {
	return !slices.Contains(t.ClusterWideNamespaces, "*") && !slices.Contains(t.ClusterWideNamespaces, ns)
}

func orNoneAccount(sa string) string {
	if sa == "" {
		return "the controller's own identity"
	}
	return "--default-service-account " + sa
}
