/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// inventory.go: the inventory entries of applied objects — building, merging
// and finding the stale ones.

package apply

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
)

// ref is the inventory entry of obj: ID <namespace>_<name>_<group>_<kind>
// (cli-utils' ObjMetadata, the format of Flux's inventory) and the version.
func ref(obj *unstructured.Unstructured) v1alpha1.ObjectRef {
	return v1alpha1.ObjectRef{
		ID:      objects.Key(obj).String(),
		Version: obj.GroupVersionKind().Version,
	}
}

func newInventory(set []*item) *v1alpha1.Inventory {
	refs := make([]v1alpha1.ObjectRef, 0, len(set))
	for _, it := range set {
		refs = append(refs, ref(it.obj))
	}
	return mergeInventory(nil, refs)
}

// mergeInventory returns the union of inv and refs sorted by ID; refs win
// on version.
func mergeInventory(inv *v1alpha1.Inventory, refs []v1alpha1.ObjectRef) *v1alpha1.Inventory {
	byID := map[string]string{}
	if inv != nil {
		for _, e := range inv.Entries {
			byID[e.ID] = e.Version
		}
	}
	for _, e := range refs {
		byID[e.ID] = e.Version
	}
	out := &v1alpha1.Inventory{Entries: make([]v1alpha1.ObjectRef, 0, len(byID))}
	for id, v := range byID {
		out.Entries = append(out.Entries, v1alpha1.ObjectRef{ID: id, Version: v})
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].ID < out.Entries[j].ID })
	return out
}

// stale returns the entries of old that are not in current.
func stale(old, current *v1alpha1.Inventory) []v1alpha1.ObjectRef {
	if old == nil {
		return nil
	}
	keep := map[string]bool{}
	for _, e := range current.Entries {
		keep[e.ID] = true
	}
	var out []v1alpha1.ObjectRef
	for _, e := range old.Entries {
		if !keep[e.ID] {
			out = append(out, e)
		}
	}
	return out
}
