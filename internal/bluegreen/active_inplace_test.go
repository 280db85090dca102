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

// Changes patched in place into the active colour.

// An in-place patch is a transition of its own: it has a start, a target
// revision, a deadline and a report; the patched child keeps the savepoint
// it was started from.
func TestInPlacePatchIsReported(t *testing.T) {
	w, sp := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	w.advance(time.Minute)
	parallelismDefault(w, "4", "main@sha1:r3")
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	if got := w.expectApply(d, "orders-green").Job.InitialSavepointPath; got != sp {
		w.fatalf("patched green starts from %q, want its own savepoint %q", got, sp)
	}
	st := w.status()
	if st.TargetRevision != "main@sha1:r3" || st.DeploymentReadyTimestamp != nil {
		w.fatalf("status %+v", st)
	}
	w.expectTime("transitionStartTime", st.TransitionStartTime, w.now)
	w.expectTime("abortTimestamp", st.AbortTimestamp, w.now.Add(10*time.Minute))
	w.expectEvents(d, "PatchStarted")
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "patching orders-green in place (PATCH_CHILD)")
	w.expectRequeue(d, 15*time.Second)
	w.ready(Green)
	d = w.step()
	w.expectState(sActiveGreen, jRunning)
	w.expectEvents(d, "PatchCompleted")
}

// A patch keeps the child's own initialSavepointPath when the
// savepointRedeployNonce stays the same.
func TestInPlacePatchWithAnUnchangedRedeployNonceKeepsTheSavepoint(t *testing.T) {
	w, sp := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint, func(w *world) {
		w.parent.Spec.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
	})
	parallelismDefault(w, "4", "main@sha1:r3")
	d := w.step()
	if got := w.expectApply(d, "orders-green").Job.InitialSavepointPath; got != sp {
		w.fatalf("patched green starts from %q, want its own savepoint %q", got, sp)
	}
}

// Resuming with a new savepointRedeployNonce and initialSavepointPath
// redeploys the job from the path the user chose.
func TestResumeWithANewRedeployNonceGivesTheChosenPath(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, "main@sha1:r3")
	w.step()
	w.suspendDone(Green)
	w.step()
	w.expectState(sActiveGreen, jSuspended)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.State = v1alpha1.JobStateRunning
		s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
		s.Template.Spec.Job.InitialSavepointPath = "/user/chosen"
	}, "main@sha1:r4")
	d := w.step()
	if got := w.expectApply(d, "orders-green").Job.InitialSavepointPath; got != "/user/chosen" {
		w.fatalf("resumed green starts from %q, want /user/chosen", got)
	}
}

// A suspend applied in place ends when the Flink operator reports the job
// suspended for the current spec — not before — and then the status says
// so, without a deadline.
func TestInPlaceSuspendEndsWhenTheOperatorReportsIt(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, "main@sha1:r2")
	w.step()
	w.step()
	w.expectState(sToBlue, jReconciling) // the operator has not acted yet
	w.suspendDone(Blue)
	d := w.step()
	w.expectState(sActiveBlue, jSuspended)
	w.expectEvents(d, "Suspended")
	if m := eventMessage(d, "Suspended"); m != "orders-blue is suspended" || w.status().AbortTimestamp != nil {
		w.fatalf("event %q, abortTimestamp %v", m, w.status().AbortTimestamp)
	}
	// A change while suspended is applied in place; a SUSPENDED that the
	// operator reports for the previous generation does not end it.
	newImage(w, "flink:1.20.1", "main@sha1:r3")
	w.step()
	w.expectState(sToBlue, jReconciling)
	b := w.children[Blue]
	b.LifecycleState, b.JobState, b.Generation, b.ObservedGeneration = LifecycleSuspended, "FINISHED", 2, 1
	w.step()
	w.expectState(sToBlue, jReconciling)
	b.ObservedGeneration = 2
	w.step()
	w.expectState(sActiveBlue, jSuspended)
}

// A suspend the Flink operator never carries out ends at the deadline,
// leaving the job as it is.
func TestInPlaceSuspendThatNeverCompletesEndsAtTheDeadline(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, "main@sha1:r2")
	w.step()
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectError("in-place change of orders-blue did not complete")
}

// During an in-place patch, another patch is re-applied at once (keeping
// the child's savepoint), while a change that needs a new colour waits for
// the patch to complete; the patched job is then reported running while
// the new colour waits for its rollout window.
func TestChangesDuringAnInPlacePatch(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	w.ready(Blue)
	w.step()
	parallelismDefault(w, "4", "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	parallelismDefault(w, "8", "main@sha1:r3")
	d := w.step()
	spec := w.expectApply(d, "orders-blue")
	if spec.Job.InitialSavepointPath != "/user/sp-0" || !strings.Contains(string(spec.FlinkConfiguration.Raw), `"parallelism.default":"8"`) {
		w.fatalf("re-applied blue: %s %s", spec.Job.InitialSavepointPath, spec.FlinkConfiguration.Raw)
	}
	if m := eventMessage(d, "TransitionUpdated"); !strings.Contains(m, "re-applying orders-blue with main@sha1:r3") {
		w.fatalf("event %q", m)
	}
	newImage(w, "flink:1.20.1", "main@sha1:r4")
	w.expectNoop(w.step())
	w.window = Window{OpensAt: w.now.Add(time.Hour), Description: "waiting for rollout window 02:00–04:00 UTC"}
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForRolloutWindow", "to roll out main@sha1:r4")
	w.window = Window{Open: true}
	w.step()
	w.expectState(sSpBlue, jReconciling)
}

// A suspended leftover of an aborted transition is deleted once an
// in-place change of the active colour completes.
func TestLeftoverIsDeletedWhenAnInPlaceChangeCompletes(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	parallelismDefault(w, "4", "main@sha1:r3")
	newImage(w, "flink:1.20", "main@sha1:r3") // the failed image change reverted
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.ready(Blue)
	d := w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectDelete(d, "orders-green")
}

// The active child deleted during an in-place change: the status reports
// it and carries no deadline.
func TestActiveChildDeletedDuringAnInPlaceChange(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r2")
	w.step()
	w.deleteByHand(Blue)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	if w.status().AbortTimestamp != nil {
		w.fatalf("abortTimestamp %v outside a transition", w.status().AbortTimestamp)
	}
}
