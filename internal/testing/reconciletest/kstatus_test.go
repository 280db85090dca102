/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconciletest

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestKstatusViolations(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: "R"}
	}
	for _, tc := range []struct {
		name     string
		gen, obs int64
		conds    []metav1.Condition
		want     int
	}{
		{name: "no status", gen: 1},
		{name: "ready", gen: 2, obs: 2, conds: []metav1.Condition{cond("Ready", "True")}},
		{name: "reconciling", gen: 2, obs: 1, conds: []metav1.Condition{cond("Ready", "False"), cond("Reconciling", "True")}},
		{name: "stalled", gen: 1, obs: 1, conds: []metav1.Condition{cond("Ready", "False"), cond("Stalled", "True")}},
		{name: "ready while reconciling", gen: 1, obs: 1, conds: []metav1.Condition{cond("Ready", "True"), cond("Reconciling", "True")}, want: 1},
		{name: "ready while stalled", gen: 1, obs: 1, conds: []metav1.Condition{cond("Ready", "True"), cond("Stalled", "True")}, want: 2},
		{name: "stalled without ready", gen: 1, obs: 1, conds: []metav1.Condition{cond("Stalled", "True")}, want: 1},
		{name: "observed ahead", gen: 1, obs: 2, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "r", Generation: tc.gen}}
			gr.Status.ObservedGeneration, gr.Status.Conditions = tc.obs, tc.conds
			if got := KstatusViolations(gr); len(got) != tc.want {
				t.Errorf("typed: %d violations %q, want %d", len(got), got, tc.want)
			}
			p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: tc.gen}}
			p.Status.ObservedGeneration, p.Status.Conditions = tc.obs, tc.conds
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := KstatusViolations(&unstructured.Unstructured{Object: m}); len(got) != tc.want {
				t.Errorf("unstructured: %d violations %q, want %d", len(got), got, tc.want)
			}
		})
	}
}
