/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func namespace(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
}

func TestNamespaceAndItsObjectsApplyInOneCall(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t) + "-new"
	// Order in the set must not matter.
	set := []*unstructured.Unstructured{configMap(ns, "cm", map[string]any{"k": "1"}), namespace(ns)}
	o := Options{Source: source(ns)}
	res := mustApply(t, a, set, o)
	if res.Changes[0].ID != "Namespace/"+ns {
		t.Errorf("first change %v, want the namespace", res.Changes[0])
	}
	wantActions(t, res, map[string]string{"Namespace/" + ns: ActionCreated, "ConfigMap/" + ns + "/cm": ActionCreated})
	if _, ok := getConfigMap(t, ns, "cm"); !ok {
		t.Fatal("configmap not created")
	}
	count.reset()
	mustApply(t, a, set, o)
	if w := count.writes.Load(); w != 0 {
		t.Errorf("idle apply made %d writes", w)
	}
}

// TestDeferredDryRunFailureWritesOnlyStageOne: objects in a namespace the
// same set creates can be dry-run only once the namespace exists; when one
// of them is then rejected, the namespace stays (stage one) and none of the
// namespace's objects is written, the valid ones included.
func TestDeferredDryRunFailureWritesOnlyStageOne(t *testing.T) {
	ctx := context.Background()
	a, _ := newApplier(t)
	ns := newNamespace(t) + "-new"
	t.Cleanup(func() { _ = env.Client.Delete(ctx, namespace(ns)) })
	set := []*unstructured.Unstructured{namespace(ns), configMap(ns, "good", map[string]any{"k": "1"}), configMap(ns, "Bad_Name", nil)}
	_, err := a.Apply(ctx, set, Options{Source: source(ns)})
	wantErrorContains(t, err, "ConfigMap/"+ns+"/Bad_Name", "nothing applied in namespace "+ns)
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, namespace(ns)); err != nil {
		t.Errorf("stage one (the namespace) was not applied: %v", err)
	}
	if _, ok := getConfigMap(t, ns, "good"); ok {
		t.Error("a valid object of stage two was applied although its stage was rejected")
	}
}

func widgetCRD(group string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group,
			"names": map[string]any{"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{"spec": map[string]any{
						"type":       "object",
						"required":   []any{"size"},
						"properties": map[string]any{"size": map[string]any{"type": "integer"}},
					}},
				}},
			}},
		},
	}}
}

func widget(group, ns, name string, size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"size": size},
	}}
}

func TestCRDAndItsObjectsApplyInOneCall(t *testing.T) {
	ctx := context.Background()
	a, count := newApplier(t)
	ns := newNamespace(t)
	group := ns + ".test.bggitops.dev"
	t.Cleanup(func() {
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group}}
		_ = env.Client.Delete(ctx, crd)
	})
	set := []*unstructured.Unstructured{widget(group, ns, "w", 3), widgetCRD(group)}
	o := Options{Source: source(ns)}
	res := mustApply(t, a, set, o)
	wantActions(t, res, map[string]string{
		"CustomResourceDefinition/widgets." + group: ActionCreated,
		"Widget/" + ns + "/w":                       ActionCreated,
	})
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widget(group, ns, "w", 0).GroupVersionKind())
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w"}, w); err != nil {
		t.Fatal(err)
	}
	count.reset()
	res = mustApply(t, a, set, o)
	if w := count.writes.Load(); w != 0 {
		t.Errorf("idle apply made %d writes (%v)", w, res.Changes)
	}
	// A rejected custom resource is named with the schema's reason.
	_, err := a.Apply(ctx, []*unstructured.Unstructured{widgetCRD(group), {Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "bad", "namespace": ns}, "spec": map[string]any{},
	}}}, o)
	wantErrorContains(t, err, "Widget/"+ns+"/bad: spec.size: Required value")
}
