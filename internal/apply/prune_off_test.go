/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestWithoutPruneStaleObjectsAreLeftAndReported: Prune false (a
// GitRepository's spec.prune: false) leaves an object dropped from the set
// in the cluster, drops it from the inventory and reports it as skipped,
// as the per-object opt-out is reported.
func TestWithoutPruneStaleObjectsAreLeftAndReported(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	o := Options{Source: source(ns)}
	res := mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "keep", nil), configMap(ns, "drop", nil)}, o)

	o.Inventory = res.Inventory
	res = mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "keep", nil)}, o)
	wantActions(t, res, map[string]string{
		"ConfigMap/" + ns + "/keep": ActionUnchanged,
		"ConfigMap/" + ns + "/drop": ActionPruneSkipped,
	})
	if _, ok := getConfigMap(t, ns, "drop"); !ok {
		t.Error("configmap dropped from the set was deleted without Prune")
	}
	wantInventory(t, res.Inventory, ns+"_keep__ConfigMap")

	// Left once: the next apply has nothing more to report.
	o.Inventory = res.Inventory
	res = mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "keep", nil)}, o)
	wantActions(t, res, map[string]string{"ConfigMap/" + ns + "/keep": ActionUnchanged})
}
