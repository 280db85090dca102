/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestApplyCreatesThenIdleApplyWritesNothing(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	set := []*unstructured.Unstructured{
		configMap(ns, "a", map[string]any{"k": "1"}),
		configMap(ns, "b", map[string]any{"k": "2"}),
		configMap(ns, "c", map[string]any{"k": "3"}),
	}
	// Discovery (the first use of the REST mapper) is not counted.
	warm := newNamespace(t)
	mustApply(t, a, []*unstructured.Unstructured{configMap(warm, "warm", nil)}, Options{Source: source(warm)})
	count.reset()
	o := Options{Source: source(ns)}
	res := mustApply(t, a, set, o)
	wantActions(t, res, map[string]string{
		"ConfigMap/" + ns + "/a": ActionCreated,
		"ConfigMap/" + ns + "/b": ActionCreated,
		"ConfigMap/" + ns + "/c": ActionCreated,
	})
	// A dry-run and an apply each: the dry-run says the objects are
	// absent, so nothing is listed.
	if n := count.total.Load(); n != 6 {
		t.Errorf("creating 3 objects made %d requests, want 6", n)
	}
	cm, ok := getConfigMap(t, ns, "b")
	if !ok || cm.Data["k"] != "2" || cm.Annotations[v1alpha1.SourceAnnotation] != source(ns) {
		t.Fatalf("configmap b = %+v", cm)
	}
	wantInventory(t, res.Inventory, ns+"_a__ConfigMap", ns+"_b__ConfigMap", ns+"_c__ConfigMap")
	if set[0].GetAnnotations() != nil {
		t.Errorf("Apply modified its input")
	}

	count.reset()
	o.Inventory = res.Inventory
	res = mustApply(t, a, set, o)
	wantActions(t, res, map[string]string{
		"ConfigMap/" + ns + "/a": ActionUnchanged,
		"ConfigMap/" + ns + "/b": ActionUnchanged,
		"ConfigMap/" + ns + "/c": ActionUnchanged,
	})
	if w := count.writes.Load(); w != 0 {
		t.Errorf("idle apply made %d write requests, want 0", w)
	}
	// One LIST for the three ConfigMaps and one dry-run each.
	if n := count.total.Load(); n > 4 {
		t.Errorf("idle apply made %d requests, want at most 4", n)
	}
}

func wantInventory(t *testing.T, inv *v1alpha1.Inventory, ids ...string) {
	t.Helper()
	if inv == nil || len(inv.Entries) != len(ids) {
		t.Fatalf("inventory = %+v, want %v", inv, ids)
	}
	for i, id := range ids {
		if inv.Entries[i].ID != id || inv.Entries[i].Version != "v1" {
			t.Errorf("inventory[%d] = %+v, want %s v1", i, inv.Entries[i], id)
		}
	}
}

func TestRejectedObjectAppliesNothing(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "FlinkBlueGreenDeployment",
		"metadata":   map[string]any{"name": "job", "namespace": ns},
		"spec":       map[string]any{"template": map[string]any{"spec": map[string]any{}}},
	}}
	set := []*unstructured.Unstructured{
		configMap(ns, "a", map[string]any{"k": "1"}),
		bad,
		configMap(ns, "z", map[string]any{"k": "1"}),
	}
	_, err := a.Apply(context.Background(), set, Options{Source: source(ns)})
	wantErrorContains(t, err, "FlinkBlueGreenDeployment/"+ns+"/job: spec.template.spec.job: Required value")
	oes := ObjectErrors(err)
	if len(oes) != 1 || oes[0].ID != "FlinkBlueGreenDeployment/"+ns+"/job" {
		t.Errorf("ObjectErrors = %v", oes)
	}
	for _, name := range []string{"a", "z"} {
		if _, ok := getConfigMap(t, ns, name); ok {
			t.Errorf("configmap %s was applied although the set was rejected", name)
		}
	}
	if w := count.writes.Load(); w != 0 {
		t.Errorf("rejected apply made %d writes", w)
	}
}

func TestDuplicateIdentityIsRejected(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	set := []*unstructured.Unstructured{
		configMap(ns, "a", map[string]any{"k": "1"}),
		configMap(ns, "dup", map[string]any{"k": "1"}),
		configMap(ns, "dup", map[string]any{"k": "2"}),
	}
	_, err := a.Apply(context.Background(), set, Options{Source: source(ns)})
	wantErrorContains(t, err, "ConfigMap/"+ns+"/dup: defined more than once")
	if _, ok := getConfigMap(t, ns, "a"); ok {
		t.Error("configmap a was applied although the set was rejected")
	}
}

func TestObjectWithoutNamespaceIsRejected(t *testing.T) {
	a, _ := newApplier(t)
	_, err := a.Apply(context.Background(), []*unstructured.Unstructured{configMap("", "a", nil)}, Options{})
	wantErrorContains(t, err, "ConfigMap/a: namespace not set")
	var oe *ObjectError
	if !errors.As(err, &oe) {
		t.Errorf("error %v is no ObjectError", err)
	}
}

func TestDriftIsRestoredAndIdleAfterwards(t *testing.T) {
	ctx := context.Background()
	a, count := newApplier(t)
	ns := newNamespace(t)
	set := []*unstructured.Unstructured{
		configMap(ns, "edited", map[string]any{"k": "git"}),
		configMap(ns, "applied", map[string]any{"k": "git"}),
	}
	o := Options{Source: source(ns)}
	mustApply(t, a, set, o)

	// kubectl edit: a plain update by another field manager.
	cm, _ := getConfigMap(t, ns, "edited")
	cm.Data["k"] = "edited"
	if err := env.Client.Update(ctx, cm, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	// kubectl apply --server-side --force-conflicts by someone else.
	other := &corev1.ConfigMap{Data: map[string]string{"k": "other"}}
	other.APIVersion, other.Kind, other.Name, other.Namespace = "v1", "ConfigMap", "applied", ns
	err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(toUnstructured(t, other)),
		client.FieldOwner("someone"), client.ForceOwnership)
	if err != nil {
		t.Fatal(err)
	}

	count.reset()
	res := mustApply(t, a, set, o)
	wantActions(t, res, map[string]string{
		"ConfigMap/" + ns + "/edited":  ActionConfigured,
		"ConfigMap/" + ns + "/applied": ActionConfigured,
	})
	for _, name := range []string{"edited", "applied"} {
		if cm, _ := getConfigMap(t, ns, name); cm.Data["k"] != "git" {
			t.Errorf("%s: data.k = %q after apply, want git", name, cm.Data["k"])
		}
	}
	if w := count.writes.Load(); w != 2 {
		t.Errorf("drift apply made %d writes, want 2", w)
	}

	count.reset()
	res = mustApply(t, a, set, o)
	wantActions(t, res, map[string]string{
		"ConfigMap/" + ns + "/edited":  ActionUnchanged,
		"ConfigMap/" + ns + "/applied": ActionUnchanged,
	})
	if w := count.writes.Load(); w != 0 {
		t.Errorf("idle apply after drift made %d writes, want 0", w)
	}
}

// A Deployment and a Service get many server-side defaults (protocols,
// strategy, clusterIP); the dry-run comparison must still see no change.
func TestDefaultedObjectsAreIdleOnReapply(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	labels := map[string]any{"app": "web"}
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "web", "image": "nginx:1.27",
					"ports":     []any{map[string]any{"containerPort": int64(80)}},
					"resources": map[string]any{"limits": map[string]any{"cpu": "0.5", "memory": "1Gi"}},
				}}},
			},
		},
	}}
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec":     map[string]any{"selector": labels, "ports": []any{map[string]any{"port": int64(80)}}},
	}}
	set := []*unstructured.Unstructured{deploy, svc}
	mustApply(t, a, set, Options{Source: source(ns)})
	count.reset()
	res := mustApply(t, a, set, Options{Source: source(ns)})
	wantActions(t, res, map[string]string{
		"Deployment/" + ns + "/web": ActionUnchanged,
		"Service/" + ns + "/web":    ActionUnchanged,
	})
	if w := count.writes.Load(); w != 0 {
		t.Errorf("idle apply made %d writes", w)
	}
}

func TestFieldRemovedFromGitIsRemoved(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	o := Options{Source: source(ns)}
	mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "cm", map[string]any{"a": "1", "b": "2"})}, o)
	res := mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "cm", map[string]any{"a": "1"})}, o)
	wantActions(t, res, map[string]string{"ConfigMap/" + ns + "/cm": ActionConfigured})
	if cm, _ := getConfigMap(t, ns, "cm"); len(cm.Data) != 1 || cm.Data["a"] != "1" {
		t.Errorf("data = %v, want only a", cm.Data)
	}
}
