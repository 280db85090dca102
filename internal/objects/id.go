/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// id.go: how an object is identified — Key (the inventory ID), ID and KeyID
// for messages — and Duplicates.

package objects

import (
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Key is what the API server keys an object by: group, kind, namespace and
// name (not the version). Its String form,
// <namespace>_<name>_<group>_<kind>, is the inventory entry ID.
func Key(u *unstructured.Unstructured) object.ObjMetadata {
	return object.UnstructuredToObjMetadata(u)
}

// ID names an object in changes, errors and logs: Kind/namespace/name, or
// Kind/name for a cluster-scoped object.
func ID(u *unstructured.Unstructured) string { return utils.FmtUnstructured(u) }

// KeyID is ID for an object known only by its Key (an inventory entry).
func KeyID(k object.ObjMetadata) string { return utils.FmtObjMetadata(k) }

// Duplicates returns, once each, the objects whose Key an earlier object of
// objs already has: the same name in two API versions, or two namespaces
// merged into one. The API server would apply both and keep one.
func Duplicates(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	seen := make(map[object.ObjMetadata]int, len(objs))
	var dups []*unstructured.Unstructured
	for _, u := range objs {
		k := Key(u)
		seen[k]++
		if seen[k] == 2 {
			dups = append(dups, u)
		}
	}
	return dups
}
