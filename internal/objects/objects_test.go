/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package objects

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func obj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestSortIsApplyOrder(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj("bggitops.dev/v1alpha1", "FlinkBlueGreenDeployment", "a", "job"),
		obj("v1", "ConfigMap", "b", "x"),
		obj("v1", "ConfigMap", "a", "y"),
		obj("v1", "Namespace", "", "a"),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com"),
		obj("v1", "Secret", "a", "s"),
	}
	Sort(objs)
	var got []string
	for _, u := range objs {
		got = append(got, ID(u))
	}
	want := []string{"CustomResourceDefinition/widgets.example.com", "Namespace/a", "ConfigMap/a/y", "ConfigMap/b/x",
		"Secret/a/s", "FlinkBlueGreenDeployment/a/job"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestDuplicates(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj("autoscaling/v1", "HorizontalPodAutoscaler", "a", "hpa"),
		obj("autoscaling/v2", "HorizontalPodAutoscaler", "a", "hpa"),
		obj("autoscaling/v2", "HorizontalPodAutoscaler", "a", "hpa"),
		obj("v1", "ConfigMap", "a", "hpa"),
		obj("v1", "ConfigMap", "b", "hpa"),
	}
	if d := Duplicates(objs); len(d) != 1 || ID(d[0]) != "HorizontalPodAutoscaler/a/hpa" {
		t.Errorf("Duplicates = %v", d)
	}
}

func TestDrifted(t *testing.T) {
	live := func() *unstructured.Unstructured {
		u := obj("v1", "ConfigMap", "a", "cm")
		u.SetResourceVersion("7")
		u.SetUID("u")
		u.SetGeneration(3)
		u.SetAnnotations(map[string]string{v1alpha1.RevisionAnnotation: "main@sha1:1", v1alpha1.SourceAnnotation: "a/r"})
		u.Object["data"] = map[string]any{"k": "v"}
		u.Object["status"] = map[string]any{"x": "y"}
		return u
	}
	for _, tc := range []struct {
		name              string
		dry               func(*unstructured.Unstructured)
		drifted, restamps bool
	}{
		{name: "same", dry: func(*unstructured.Unstructured) {}},
		{name: "server fields and status", dry: func(u *unstructured.Unstructured) {
			u.SetResourceVersion("8")
			u.SetGeneration(4)
			u.Object["status"] = map[string]any{}
		}},
		{name: "stamps dropped (an unstamped dry-run)", dry: func(u *unstructured.Unstructured) { u.SetAnnotations(nil) }, restamps: true},
		{name: "new revision", dry: func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{v1alpha1.RevisionAnnotation: "main@sha1:2", v1alpha1.SourceAnnotation: "a/r"})
		}, restamps: true},
		{name: "data", dry: func(u *unstructured.Unstructured) { u.Object["data"] = map[string]any{"k": "w"} }, drifted: true},
		{name: "label", dry: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) }, drifted: true},
		{name: "empty labels", dry: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{}) }},
	} {
		l, d := live(), live()
		tc.dry(d)
		if got := Drifted(l, d); got != tc.drifted {
			t.Errorf("%s: Drifted = %v", tc.name, got)
		}
		if got := Restamped(l, d); got != tc.restamps {
			t.Errorf("%s: Restamped = %v", tc.name, got)
		}
	}
}
