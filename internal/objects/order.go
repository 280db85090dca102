/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// order.go: Sort and Less, the order a set of objects is applied in.

package objects

import (
	"sort"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Sort puts objs in apply order: fluxcd/pkg/ssa's kind order
// (CustomResourceDefinitions and Namespaces first, then the kinds others
// refer to, webhooks last), then namespace and name; the API version breaks
// the remaining ties so the order is deterministic.
func Sort(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := Key(objs[i]), Key(objs[j])
		if a != b {
			return Less(a, b)
		}
		return objs[i].GetAPIVersion() < objs[j].GetAPIVersion()
	})
}

// Less is the apply order of two keys.
func Less(a, b object.ObjMetadata) bool { return ssa.SortableMetas{a, b}.Less(0, 1) }
