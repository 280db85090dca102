/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"reflect"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Decide as a whole: the input it refuses, how it suspends a child, and
// the commands and revisions its messages name.

func TestDecideWithoutParentIsAnError(t *testing.T) {
	if _, err := Decide(Input{}); err == nil {
		t.Fatal("Decide without a FlinkBlueGreenDeployment: want an error")
	}
}

func TestAParentWithoutRevisionSaysSo(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	delete(w.parent.Annotations, v1alpha1.RevisionAnnotation)
	d := w.step()
	if m := eventMessage(d, "DeploymentStarted"); m != "deploying orders-blue from unknown revision" {
		w.fatalf("event %q", m)
	}
}

func TestCommandsInMessagesNameTheNamespace(t *testing.T) {
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "prod"}}
	if got := (&decider{p: p}).cmd("retry"); got != "`bg-gitops retry fbgd orders -n prod`" {
		t.Errorf("cmd = %s", got)
	}
	p.Namespace = ""
	if got := (&decider{p: p}).cmd("retry"); got != "`bg-gitops retry fbgd orders`" {
		t.Errorf("cmd = %s", got)
	}
}

// Suspending a child changes only its job.state: the job it runs is kept
// for the resume; a child whose job section is gone is suspended too.
func TestSuspendingAChildKeepsItsJob(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	want := w.children[Green].Spec.DeepCopy()
	want.Job.State = v1alpha1.JobStateSuspended
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	if !reflect.DeepEqual(&w.children[Green].Spec, want) {
		w.fatalf("suspended green %+v, want %+v", w.children[Green].Spec.Job, want.Job)
	}

	w = newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.running(Blue, t0.Add(-time.Hour))
	w.running(Green, t0).Spec.Job = nil
	w.step()
	w.expectState(sActiveBlue, jRunning)
	if j := w.children[Green].Spec.Job; j == nil || j.State != v1alpha1.JobStateSuspended {
		w.fatalf("green not suspended: %+v", j)
	}
}
