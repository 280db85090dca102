/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The first deployment: a parent without an active colour deploys blue,
// or adopts the child that already runs the job.

func TestFirstDeploymentIsReportedStepByStep(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.now = t0.Add(300 * time.Millisecond)
	d := w.step()
	w.expectEvents(d, "DeploymentStarted")
	if m := eventMessage(d, "DeploymentStarted"); m != "deploying orders-blue from main@sha1:r1" {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "deploying orders-blue (main@sha1:r1)")
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonProgressing, "deploying orders-blue (main@sha1:r1)")
	var types []string
	for _, c := range w.status().Conditions {
		types = append(types, c.Type)
	}
	if strings.Join(types, ",") != "Ready,Reconciling" {
		w.fatalf("conditions not sorted by type: %v", types)
	}
	// A timer never runs shorter than asked: the deadline is rounded up to
	// the second the API server keeps.
	w.expectTime("abortTimestamp", w.status().AbortTimestamp, t0.Add(10*time.Minute+time.Second))
	w.expectTime("lastReconciledTimestamp", w.status().LastReconciledTimestamp, t0)
	w.expectRequeue(d, 15*time.Second)

	// While blue comes up: polled every interval, and at the deadline.
	w.advance(time.Minute)
	d = w.step()
	w.expectRequeue(d, 15*time.Second)
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing,
		"waiting for orders-blue to become ready (abort at 2026-07-20T12:10:01Z)")
	w.now = t0.Add(10*time.Minute + time.Second - 5*time.Second)
	d = w.step()
	w.expectRequeue(d, 5*time.Second)

	w.ready(Blue)
	d = w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectEvents(d, "DeploymentCompleted")
	if m := eventMessage(d, "DeploymentCompleted"); m != "orders-blue is active with main@sha1:r1" {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionTrue, ReasonSucceeded, "orders-blue runs main@sha1:r1")
}

// A retry of an aborted first deployment is acknowledged by the decision
// that acts on it, not reported as ignored later.
func TestRetryOfAnAbortedFirstDeploymentIsAcknowledgedAtOnce(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.step()
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sInit, jFailing)
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectEvents(d, "DeploymentStarted")
	if w.status().LastHandledRetryAt != "x1" || w.children[Blue].suspendedSpec() {
		w.fatalf("retry: %+v %v", w.status(), w.childNames())
	}
	w.expectNoop(w.step())
}

// Promote and abort requests made while nothing is deployed are
// acknowledged and reported as ignored: they do not act on the first
// deployment that follows.
func TestRequestsBeforeTheFirstDeploymentAreIgnored(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	d := w.step()
	w.expectState(sInit, jSuspended)
	w.expectEvents(d, "Suspended")
	if m := eventMessage(d, "Suspended"); m != "spec.template.spec.job.state is suspended: no FlinkDeployment is started" {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonSuspended, "the job is suspended (spec.template.spec.job.state)")
	w.annotate(v1alpha1.PromoteRequestedAtAnnotation, "p0")
	w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a0")
	d = w.step()
	w.expectEvents(d, "PromoteIgnored", "AbortIgnored")
	if st := w.status(); st.LastHandledPromoteAt != "p0" || st.LastHandledAbortAt != "a0" {
		w.fatalf("requests not acknowledged: %+v", st)
	}
	resume(w, "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.advance(time.Minute)
	w.step()
	w.expectState(sToBlue, jReconciling)
}

// A suspended template leaves no job running, whatever children the status
// does not account for.
func TestSuspendedTemplateSuspendsEveryChild(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	w.parent.Status.BlueGreenState = v1alpha1.InitializingBlue
	w.running(Blue, t0)
	w.running(Green, t0)
	w.step()
	w.expectState(sInit, jSuspended)
	if !w.children[Blue].suspendedSpec() || !w.children[Green].suspendedSpec() {
		w.fatalf("children left running: %v", w.childNames())
	}
}

// A first deployment waits until a leftover of the same name is gone.
func TestFirstDeploymentWaitsForALeftoverToBeDeleted(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.step()
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sInit, jFailing)
	w.deleteByHand(Blue)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	if len(d.Actions) != 0 {
		w.fatalf("acted on a child being deleted: %s", describeActions(d.Actions))
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForDeletion",
		"waiting for FlinkDeployment orders-blue to be deleted before deploying")
	w.expectRequeue(d, 15*time.Second)
	w.gone()
	w.step()
	w.expectState(sToBlue, jReconciling)
}

// Adoption: a parent whose status was lost takes over the child that runs
// the job: running before suspended, ready before not ready, older before
// newer; another running child is suspended.
func TestAdoptionPicksTheChildThatRunsTheJob(t *testing.T) {
	older, newer := t0.Add(-2*time.Hour), t0.Add(-time.Hour)
	for _, tc := range []struct {
		name         string
		blue, green  func(w *world)
		want         Color
		suspendOther bool
	}{
		{"running before suspended", func(w *world) {
			b := w.running(Blue, older)
			b.Spec.Job.State, b.LifecycleState, b.JobState = v1alpha1.JobStateSuspended, LifecycleSuspended, "FINISHED"
		}, func(w *world) { w.running(Green, newer) }, Green, false},
		{"ready before not ready", func(w *world) {
			b := w.running(Blue, older)
			b.LifecycleState, b.JobState = "FAILED", "FAILED"
		}, func(w *world) { w.running(Green, newer) }, Green, true},
		{"older before newer", func(w *world) { w.running(Blue, newer) }, func(w *world) { w.running(Green, older) }, Green, true},
		{"older before newer, blue", func(w *world) { w.running(Blue, older) }, func(w *world) { w.running(Green, newer) }, Blue, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
			tc.blue(w)
			tc.green(w)
			d := w.step()
			want := w.children[tc.want]
			if st := w.status(); st.BlueGreenState != activeState(tc.want) || st.ActiveDeployment != want.Name || st.ActiveRevision != want.Revision {
				w.fatalf("adopted %s %s %s, want %s", st.BlueGreenState, st.ActiveDeployment, st.ActiveRevision, want.Name)
			}
			if m := eventMessage(d, "Adopted"); !strings.Contains(m, want.Name+" is taken as the active deployment") || !d.Events[0].Warning {
				w.fatalf("want a warning that %s was adopted, got %+v", want.Name, d.Events)
			}
			if other := w.children[tc.want.Other()]; other.suspendedSpec() != true {
				w.fatalf("%s left running beside the adopted %s", other.Name, want.Name)
			}
			if got := len(d.Actions) == 1; got != tc.suspendOther {
				w.fatalf("actions %s, want the other colour suspended: %v", describeActions(d.Actions), tc.suspendOther)
			}
		})
	}
}

// A first deployment changed mid-way is re-applied from the template's
// initialSavepointPath.
func TestFirstDeploymentIsReappliedWithTheChange(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeStateless)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Job.Parallelism = ptr(int32(4)) }, "main@sha1:r2")
	d := w.step()
	spec := w.expectApply(d, "orders-blue")
	if *spec.Job.Parallelism != 4 || spec.Job.InitialSavepointPath != "/user/sp-0" {
		w.fatalf("blue re-applied with parallelism %d from %q", *spec.Job.Parallelism, spec.Job.InitialSavepointPath)
	}
}
