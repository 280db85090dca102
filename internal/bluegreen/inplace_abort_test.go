/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// An in-place change that aborts leaves the only job as it is: it is the
// target. The status then follows that child, not the abort.

// abortedInPlace patches green in place and lets the grace period run
// out before green runs the patch.
func abortedInPlace(t *testing.T) *world {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r3")
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveGreen, jFailing)
	return w
}

// A job that comes up with the patch after the abort is RUNNING again,
// with no error. (Failed on the code as it was: FAILING stayed until the
// next commit.)
func TestAJobThatRecoversAfterAnInPlaceAbortIsReportedRunning(t *testing.T) {
	w := abortedInPlace(t)
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	if w.status().Error != "" {
		w.fatalf("error kept after the job recovered: %q", w.status().Error)
	}
}

// A retry after an in-place abort watches the patched job again, with a
// fresh grace period, and reports its outcome as a rollout of its own.
// (Failed on the code as it was: the retry was acknowledged and reported
// RECONCILING with no deadline and no rollout.)
func TestRetryAfterAnInPlaceAbortWatchesTheJobAgain(t *testing.T) {
	w := abortedInPlace(t)
	w.failChild(Green)
	w.step()
	w.expectState(sActiveGreen, jFailing)
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "r1")
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	w.expectEvents(d, "PatchStarted")
	w.expectTime("abortTimestamp", w.status().AbortTimestamp, w.now.Add(10*time.Minute))
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	expectInPlaceSucceeded(w, "main@sha1:r3")
}

// A commit pushed after an in-place abort, whose change would be a
// blue/green transition, is applied in place to the job that never came
// up with the aborted patch: there is no ready job to take a savepoint
// from, and waiting for one waits forever. (Failed on the code as it was:
// WaitingForActiveJob until someone fixed the job by hand.)
func TestACommitAfterAnInPlaceAbortReplacesThePatchThatNeverCameUp(t *testing.T) {
	w := abortedInPlace(t)
	newImage(w, "flink:1.20.2", "main@sha1:r4")
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	w.expectEvents(d, "ReplacingAbortedPatch", "PatchStarted")
	if g := w.children[Green]; g.Spec.Image != "flink:1.20.2" {
		w.fatalf("green runs %q, want the new image patched in place", g.Spec.Image)
	}
	if w.children[Blue] != nil {
		w.fatalf("a second colour was started: %+v", w.children[Blue])
	}
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	expectInPlaceSucceeded(w, "main@sha1:r4")
}

// A job that came up with the aborted patch and stopped again later, or
// one the Flink operator rolled back to its last stable spec, is not ready
// like any other: a commit whose change needs a blue/green transition
// waits for it, with or without a change in between.
func TestACommitAfterAnInPlaceAbortWaitsOnceTheJobRecovered(t *testing.T) {
	w := abortedInPlace(t)
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	w.failChild(Green)
	imageChangeWaits(w)

	// The Flink operator rolled the patch back: the last stable spec runs,
	// with its state, though the child is not ready.
	w = abortedInPlace(t)
	g := w.children[Green]
	g.JobState, g.LifecycleState = JobRunning, "ROLLED_BACK"
	imageChangeWaits(w)

	w = abortedInPlace(t)
	w.ready(Green)
	w.step()
	parallelismDefault(w, "6", "main@sha1:r4")
	w.step()
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	w.failChild(Green)
	imageChangeWaits(w)
}

// imageChangeWaits pushes an image change, a blue/green transition, and
// expects it to wait for the active job.
func imageChangeWaits(w *world) {
	w.t.Helper()
	newImage(w, "flink:1.20.2", "main@sha1:r5")
	w.step()
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForActiveJob", "")
}

// expectInPlaceSucceeded expects the last rollout in history to be rev's
// succeeded in-place change.
func expectInPlaceSucceeded(w *world, rev string) {
	w.t.Helper()
	h := w.status().History
	if last := h[len(h)-1]; last.Kind != v1alpha1.RolloutInPlace || last.Outcome != v1alpha1.RolloutSucceeded || last.Revision != rev {
		w.fatalf("want %s's succeeded in-place rollout last: %+v", rev, h)
	}
}
