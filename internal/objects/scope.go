/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// scope.go: whether a kind is namespaced — from the CRDs in a set
// (CRDScopes) or from the cluster's RESTMapper (Namespaced).

package objects

import (
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRDScopes maps the kinds that the CustomResourceDefinitions of objs define
// to whether they are namespaced, so objects of those kinds can be placed
// and checked before the CRD exists in the cluster.
func CRDScopes(objs []*unstructured.Unstructured) map[schema.GroupKind]bool {
	scopes := map[schema.GroupKind]bool{}
	for _, u := range objs {
		if u == nil || !utils.IsCRD(u) {
			continue
		}
		scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
		scopes[CRDKind(u)] = scope != "Cluster"
	}
	return scopes
}

// CRDKind is the kind that a CustomResourceDefinition defines.
func CRDKind(crd *unstructured.Unstructured) schema.GroupKind {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	return schema.GroupKind{Group: group, Kind: kind}
}

// Namespaced asks the cluster, through its RESTMapper, whether gvk is a
// namespaced kind. The error is the mapper's (meta.IsNoMatchError for a
// kind the cluster does not serve).
func Namespaced(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}
