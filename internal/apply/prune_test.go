/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestPruneDeletesObjectDroppedFromSet(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	o := Options{Source: source(ns), Prune: true}
	res := mustApply(t, a, []*unstructured.Unstructured{
		configMap(ns, "keep", map[string]any{"k": "1"}),
		configMap(ns, "drop", map[string]any{"k": "1"}),
	}, o)

	o.Inventory = res.Inventory
	res = mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "keep", map[string]any{"k": "1"})}, o)
	wantActions(t, res, map[string]string{
		"ConfigMap/" + ns + "/keep": ActionUnchanged,
		"ConfigMap/" + ns + "/drop": ActionPruned,
	})
	if _, ok := getConfigMap(t, ns, "drop"); ok {
		t.Error("dropped configmap still exists")
	}
	wantInventory(t, res.Inventory, ns+"_keep__ConfigMap")
}

func TestPruneDisabledKeepsObject(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	o := Options{Source: source(ns), Prune: true}
	optedOut := annotate(configMap(ns, "opted-out", nil), v1alpha1.PruneAnnotation, v1alpha1.PruneDisabledValue)
	res := mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "keep", nil), optedOut}, o)

	o.Inventory = res.Inventory
	res = mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "keep", nil)}, o)
	wantActions(t, res, map[string]string{
		"ConfigMap/" + ns + "/keep":      ActionUnchanged,
		"ConfigMap/" + ns + "/opted-out": ActionPruneSkipped,
	})
	if _, ok := getConfigMap(t, ns, "opted-out"); !ok {
		t.Error("configmap with prune disabled was deleted")
	}
	wantInventory(t, res.Inventory, ns+"_keep__ConfigMap")
}

func TestPruneNeverTouchesForeignObjects(t *testing.T) {
	ctx := context.Background()
	a, _ := newApplier(t)
	ns := newNamespace(t)
	foreign := map[string]map[string]string{
		"no-annotation": nil,
		"other-source":  {v1alpha1.SourceAnnotation: ns + "/other"},
	}
	for name, ann := range foreign {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: ann}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	// An inventory that (wrongly) lists them, e.g. edited by hand.
	inv := &v1alpha1.Inventory{Entries: []v1alpha1.ObjectRef{
		{ID: ns + "_no-annotation__ConfigMap", Version: "v1"},
		{ID: ns + "_other-source__ConfigMap", Version: "v1"},
		{ID: ns + "_gone__ConfigMap", Version: "v1"},
	}}
	res := mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "mine", nil)},
		Options{Source: source(ns), Prune: true, Inventory: inv})
	wantActions(t, res, map[string]string{"ConfigMap/" + ns + "/mine": ActionCreated})
	for name := range foreign {
		if _, ok := getConfigMap(t, ns, name); !ok {
			t.Errorf("foreign configmap %s was deleted", name)
		}
	}
	wantInventory(t, res.Inventory, ns+"_mine__ConfigMap")
}

func TestNoPruneAfterFailedApply(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	o := Options{Source: source(ns), Prune: true}
	res := mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "old", nil)}, o)

	o.Inventory = res.Inventory
	bad := configMap(ns, "Invalid_Name", nil)
	res, err := a.Apply(context.Background(), []*unstructured.Unstructured{bad}, o)
	wantErrorContains(t, err, "ConfigMap/"+ns+"/Invalid_Name")
	if _, ok := getConfigMap(t, ns, "old"); !ok {
		t.Error("a failed apply pruned")
	}
	wantInventory(t, res.Inventory, ns+"_old__ConfigMap")
}

func TestSourceAnnotationFromGitIsOverwritten(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	claim := annotate(configMap(ns, "claims", nil), v1alpha1.SourceAnnotation, ns+"/other")
	mustApply(t, a, []*unstructured.Unstructured{claim}, Options{Source: source(ns)})
	cm, _ := getConfigMap(t, ns, "claims")
	if got := cm.Annotations[v1alpha1.SourceAnnotation]; got != source(ns) {
		t.Errorf("source annotation = %q, want %q", got, source(ns))
	}
}
