/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"fmt"
	"slices"

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
}

// serviceAccount returns the ServiceAccount gr's applies impersonate in
// gr's namespace; "" means the controller's own identity.
func (t Tenancy) serviceAccount(gr *v1alpha1.GitRepository) (string, error) {
	switch {
	case gr.Spec.ServiceAccountName != "":
		return gr.Spec.ServiceAccountName, nil
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
