/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// tenancy.go: Tenancy, the ServiceAccounts GitRepositories apply as and their
// Flink jobs may run as, and whether a namespace is confined.

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// check is the apply check of a GitRepository of namespace ns: a
// FlinkBlueGreenDeployment's child keeps to the cluster and the account
// lists (checkChild). Where tenants share an Ingress controller
// (--ingress-host-pattern is set), an Ingress that a confined
// GitRepository applies keeps to the Ingress policy too: the account a
// namespace is opted in to Ingresses with may write any Ingress. A
// cluster-wide namespace's GitRepository is the platform's own.
func (t Tenancy) check(ns string) func(context.Context, client.Client, *unstructured.Unstructured) error {
	bounded := len(t.Ingress.HostPatterns) > 0 && t.confined(ns)
	return func(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
		if bounded {
			if err := t.Ingress.checkApplied(obj); err != nil {
				return err
			}
		}
		return t.checkChild(ctx, c, obj)
	}
}

// flinkAccountKeys are the Flink options that name the account of a job's
// pods. The per-component keys win over kubernetes.service-account, which
// the Flink operator sets from spec.serviceAccount: a template naming one
// runs its JobManager or TaskManagers as it, whatever spec.serviceAccount says.
var flinkAccountKeys = []string{"kubernetes.service-account", "kubernetes.jobmanager.service-account", "kubernetes.taskmanager.service-account"}

// flinkAccounts refuses a FlinkDeployment spec (unstructured) any of
// whose pods would run as an account outside FlinkAccounts: its
// serviceAccount, the account options of its flinkConfiguration (flat
// "a.b" keys or nested maps), and serviceAccountName of its pod templates.
func (t Tenancy) flinkAccounts(spec map[string]any) error {
	account, _, _ := unstructured.NestedString(spec, "serviceAccount")
	if err := t.flinkAccount(account); err != nil {
		return err
	}
	conf, _ := spec["flinkConfiguration"].(map[string]any)
	for _, key := range flinkAccountKeys {
		for _, v := range configValues(conf, key) {
			if s, ok := v.(string); !ok || t.flinkAccount(strings.TrimSpace(s)) != nil {
				return fmt.Errorf("%w: flinkConfiguration %s %v is not one a job may run as (--allowed-flink-accounts: %s)",
					ErrAccountNotAllowed, key, v, strings.Join(t.FlinkAccounts, ","))
			}
		}
	}
	for _, path := range [][]string{{"podTemplate"}, {"jobManager", "podTemplate"}, {"taskManager", "podTemplate"}} {
		// serviceAccount is the pod's deprecated spelling of serviceAccountName.
		for _, field := range []string{"serviceAccountName", "serviceAccount"} {
			sa, found, _ := unstructured.NestedFieldNoCopy(spec, append(path, "spec", field)...)
			if !found {
				continue
			}
			if s, ok := sa.(string); !ok || t.flinkAccount(s) != nil {
				return fmt.Errorf("%w: %s.spec.%s %v is not one a job may run as (--allowed-flink-accounts: %s)",
					ErrAccountNotAllowed, strings.Join(path, "."), field, sa, strings.Join(t.FlinkAccounts, ","))
			}
		}
	}
	return nil
}

// configValues returns every value Flink's configuration conf gives the
// dotted key, whichever way it is written: flat ("a.b.c"), nested
// (a: {b: {c}}) or partly nested (a: {"b.c"}).
func configValues(conf map[string]any, key string) []any {
	var out []any
	for k, v := range conf {
		k = strings.TrimSpace(k)
		switch {
		case k == key:
			out = append(out, v)
		case strings.HasPrefix(key, k+"."):
			if m, ok := v.(map[string]any); ok {
				out = append(out, configValues(m, strings.TrimPrefix(key, k+"."))...)
			}
		}
	}
	return out
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
