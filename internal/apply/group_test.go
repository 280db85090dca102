/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestARefusedNamespaceKeepsItsInventoryAndIsNotPruned: when an object of
// one namespace is owned elsewhere, that namespace is left as it was (its
// objects neither written nor pruned, its inventory entries kept) while the
// other namespace is applied and pruned; once the object is gone the next
// Apply catches up.
func TestARefusedNamespaceKeepsItsInventoryAndIsNotPruned(t *testing.T) {
	ctx := context.Background()
	a, _ := newApplier(t)
	nsA, nsB := newNamespace(t), newNamespace(t)
	o := Options{Source: nsA + "/platform", Prune: true}
	res := mustApply(t, a, []*unstructured.Unstructured{configMap(nsA, "gone", nil), configMap(nsB, "gone", nil)}, o)

	squatter := configMap(nsB, "taken", map[string]any{"k": "hand"})
	if err := env.Client.Create(ctx, squatter); err != nil {
		t.Fatal(err)
	}
	o.Inventory = res.Inventory
	set := []*unstructured.Unstructured{configMap(nsA, "new", nil), configMap(nsB, "new", nil), configMap(nsB, "taken", nil)}
	res, err := a.Apply(ctx, set, o)
	var partial *PartialError
	if !errors.As(err, &partial) || !errors.Is(err, ErrOwnedElsewhere) {
		t.Fatalf("err = %v, want a PartialError naming the owned object", err)
	}
	wantErrorContains(t, err, "ConfigMap/"+nsB+"/taken")
	wantActions(t, res, map[string]string{"ConfigMap/" + nsA + "/new": ActionCreated, "ConfigMap/" + nsA + "/gone": ActionPruned})
	if _, ok := getConfigMap(t, nsB, "gone"); !ok {
		t.Error("an object of the refused namespace was pruned")
	}
	if _, ok := getConfigMap(t, nsB, "new"); ok {
		t.Error("an object of the refused namespace was applied")
	}
	wantInventoryOf(t, res.Inventory, configMap(nsA, "new", nil), configMap(nsB, "gone", nil))

	if err := env.Client.Delete(ctx, squatter); err != nil {
		t.Fatal(err)
	}
	o.Inventory = res.Inventory
	res = mustApply(t, a, set, o)
	wantActions(t, res, map[string]string{"ConfigMap/" + nsA + "/new": ActionUnchanged,
		"ConfigMap/" + nsB + "/new": ActionCreated, "ConfigMap/" + nsB + "/taken": ActionCreated, "ConfigMap/" + nsB + "/gone": ActionPruned})
	wantInventoryOf(t, res.Inventory, set...)
}

// wantInventoryOf checks that inv lists exactly objs.
func wantInventoryOf(t *testing.T, inv *v1alpha1.Inventory, objs ...*unstructured.Unstructured) {
	t.Helper()
	var ids []string
	for _, e := range mergeInventory(nil, refsOf(objs)).Entries {
		ids = append(ids, e.ID)
	}
	wantInventory(t, inv, ids...)
}

func refsOf(objs []*unstructured.Unstructured) []v1alpha1.ObjectRef {
	out := make([]v1alpha1.ObjectRef, 0, len(objs))
	for _, obj := range objs {
		out = append(out, ref(obj))
	}
	return out
}
