/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The active colour between rollouts: a commit that waits for the active
// job or for a rollout window, a leftover of an earlier transition, the
// active child deleted by hand.

// The active child deleted by hand: the status says what happened and how
// to recover; a retry redeploys it from spec.template as a first
// deployment, which is aborted (suspended) like one if it never runs.
func TestRedeployOfADeletedActiveChildIsAFirstDeployment(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Green)
	d := w.step()
	w.expectState(sActiveGreen, jFailing)
	w.expectError("active FlinkDeployment orders-green is being deleted outside bg-gitops; once it is gone, run `bg-gitops retry fbgd orders -n prod`")
	w.expectRequeue(d, 15*time.Second)
	w.gone()
	d = w.step()
	w.expectError("active FlinkDeployment orders-green is missing (deleted outside bg-gitops?)")
	w.expectRequeue(d, 0)
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	d = w.step()
	w.expectState(sToGreen, jReconciling)
	w.expectEvents(d, "RedeployStarted")
	if st := w.status(); st.ActiveDeployment != "" || st.Savepoint != nil || st.LastHandledRetryAt != "x1" {
		w.fatalf("a redeploy from spec.template has no active deployment and no savepoint: %+v", st)
	}
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sInit, jFailing)
	if !w.children[Green].suspendedSpec() {
		w.fatalf("the aborted redeploy is left running")
	}
}

// A commit that rolls nothing out (it reverts the failed change; a new
// initialSavepointPath is used by the next colour only) is recorded as
// handled and ends the failed rollout's FAILING: the job runs, the commit
// is the target, and the colour the abort left suspended is deleted.
func TestACommitWithNothingToRollOutEndsAFailure(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectCondition(v1alpha1.StalledCondition, metav1.ConditionTrue, ReasonRolloutFail, "transition to orders-green aborted")
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonRolloutFail, w.status().Error)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Image = "flink:1.20"
		s.Template.Spec.Job.InitialSavepointPath = "/user/other"
	}, "main@sha1:r3")
	d := w.step()
	w.expectState(sActiveBlue, jRunning)
	if describeActions(d.Actions) != "[delete(orders-green)]" || w.status().Error != "" || w.status().LastReconciledSpec != w.specJSON() ||
		w.status().TargetRevision != "main@sha1:r3" {
		w.fatalf("want the commit recorded and the leftover deleted: %s %+v", describeActions(d.Actions), w.status())
	}
	w.expectNoCondition(v1alpha1.StalledCondition)
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionTrue, ReasonSucceeded, "orders-blue runs main@sha1:r1")
}

// A change that finds the active job not ready says why, with what the
// Flink operator reports, and waits for it.
func TestChangeWaitsForTheActiveJob(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Blue)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	if w.status().TargetRevision != "main@sha1:r2" {
		w.fatalf("targetRevision %q", w.status().TargetRevision)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForActiveJob", "(lifecycle FAILED, job FAILED)")
	w.ready(Blue)
	b := w.children[Blue]
	b.JobState, b.Generation, b.ObservedGeneration = "", 2, 1
	w.step()
	w.expectError("(lifecycle STABLE, job -, spec not yet observed by the Flink operator)")

	// Ready again while the rollout window is closed: the wait for the
	// window is reported (the window opens this very instant: polled in a
	// second).
	b.JobState, b.ObservedGeneration = JobRunning, 2
	w.window = Window{OpensAt: w.now}
	d := w.step()
	w.expectEvents(d, "WaitingForRolloutWindow")
	if m := eventMessage(d, "WaitingForRolloutWindow"); m != "waiting for rollout window to roll out main@sha1:r2" {
		w.fatalf("event %q", m)
	}
	w.expectRequeue(d, time.Second)
	// The rollout has not failed: it waits (a commit status is pending).
	w.expectState(sActiveBlue, jRunning)
	if w.status().Error != "" {
		w.fatalf("stale error %q while waiting for the window", w.status().Error)
	}
}

// A commit that follows a failed rollout and waits for the rollout window
// does not carry the earlier failure.
func TestACommitWaitingForTheWindowDoesNotCarryAnEarlierFailure(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.failSnapshot(SnapshotFailed, "boom")
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.window = Window{OpensAt: w.now.Add(time.Hour), Description: "waiting for rollout window 02:00–04:00 UTC"}
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	w.expectState(sActiveBlue, jRunning)
	if st := w.status(); st.Error != "" || st.TargetRevision != "main@sha1:r3" {
		w.fatalf("status %+v", st)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForRolloutWindow", "to roll out main@sha1:r3")
}

// A new change after an aborted transition first deletes the suspended
// leftover of the new colour, and says so.
func TestLeftoverIsDeletedBeforeTheNextTransition(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	d := w.step()
	w.expectDelete(d, "orders-green")
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForDeletion",
		"deleting FlinkDeployment orders-green left by an earlier transition before the new one starts")
	w.expectRequeue(d, 15*time.Second)
}
