/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// Actions the API server refuses for good (Input.Rejection).

const retryHintProd = "Fix the cause and push a new commit, or run `bg-gitops retry fbgd orders -n prod` to try again"

// A refused re-apply of the new colour ends the transition: the new colour
// is suspended, the old one keeps running, and the status carries no
// deadline of the transition that ended.
func TestRejectedNewColourIsSuspended(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	startTransition(w, v1alpha1.UpgradeModeStateless)
	w.advance(time.Minute)
	newImage(w, invalidImage, "main@sha1:r3")
	w.stepRejecting(applyOf("orders-green"), "admission webhook denied the request")
	w.expectState(sActiveBlue, jFailing)
	st := w.status()
	if !w.children[Green].suspendedSpec() || st.AbortTimestamp != nil || st.DeploymentReadyTimestamp != nil || st.TargetRevision != "main@sha1:r3" {
		w.fatalf("after the rejection: %v %+v", w.childNames(), st)
	}
	w.expectError("transition to orders-green not started: the API server rejected FlinkDeployment orders-green: " +
		"admission webhook denied the request; orders-blue keeps running. " + retryHintProd)
}

// A refused in-place change leaves the job as it is; a retry applies it
// again and is acknowledged by that decision.
func TestRejectedInPlaceChangeThenRetry(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r2")
	w.step()
	parallelismDefault(w, "8", "main@sha1:r3")
	w.stepRejecting(applyOf("orders-blue"), "forbidden")
	w.expectState(sActiveBlue, jFailing)
	w.expectError("in-place change of orders-blue not applied: the API server rejected FlinkDeployment orders-blue: forbidden; the job is left as it is")
	if w.children[Blue].suspendedSpec() {
		w.fatalf("the only job was suspended")
	}
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectApply(d, "orders-blue")
	if w.status().LastHandledRetryAt != "x1" {
		w.fatalf("retry not acknowledged")
	}
}

// A refused redeploy of a lost active child says so.
func TestRejectedRedeploy(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Blue)
	w.gone()
	w.step()
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	w.stepRejecting(applyOf("orders-blue"), "quota exceeded")
	w.expectState(sActiveBlue, jFailing)
	w.expectError("redeploy of orders-blue not started: the API server rejected FlinkDeployment orders-blue: quota exceeded")
}

// A refused re-apply of a first deployment suspends it.
func TestRejectedFirstDeploymentChangeSuspendsIt(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeStateless)
	w.step()
	newImage(w, invalidImage, "main@sha1:r2")
	w.stepRejecting(applyOf("orders-blue"), "invalid")
	w.expectState(sInit, jFailing)
	w.expectError("deployment of orders-blue not started")
	if !w.children[Blue].suspendedSpec() {
		w.fatalf("blue left running")
	}
}

// A refused delete of a first deployment that must restart from its
// savepoint suspends it.
func TestRefusedDeleteOfAFirstDeploymentSuspendsIt(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.stepRejecting(deleteOf("orders-blue"), "forbidden")
	w.expectState(sInit, jFailing)
	if w.status().Error != "the API server refused to delete FlinkDeployment orders-blue: forbidden. "+retryHintProd {
		w.fatalf("error %q", w.status().Error)
	}
	if !w.children[Blue].suspendedSpec() {
		w.fatalf("blue left running")
	}
}

// A refused delete of the old colour at the cut-over ends the transition
// at once: blue keeps running, green is suspended.
func TestRefusedDeleteAtTheCutOver(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.stepRejecting(deleteOf("orders-blue"), "forbidden")
	w.expectState(sActiveBlue, jFailing)
	if !w.children[Green].suspendedSpec() || w.status().ActiveRevision != "main@sha1:r1" {
		w.fatalf("after the refused delete: %v %+v", w.childNames(), w.status())
	}
	w.expectError("the API server refused to delete FlinkDeployment orders-blue: forbidden; orders-blue keeps running.")
}

// A refused in-place change right after the cut-over (the change waited
// for the transition) leaves the new colour running: it is the only job.
func TestRefusedChangeAfterTheCutOverKeepsTheOnlyJob(t *testing.T) {
	for _, target := range []Color{Green, Blue} {
		t.Run(string(target), func(t *testing.T) {
			w := deployed(t, v1alpha1.UpgradeModeStateless)
			if target == Blue {
				startTransition(w, v1alpha1.UpgradeModeStateless)
				w.ready(Green)
				w.step()
				w.gone()
				w.expectState(sActiveGreen, jRunning)
				newImage(w, "flink:1.20.2", "main@sha1:r3")
				w.step()
			} else {
				startTransition(w, v1alpha1.UpgradeModeStateless)
			}
			w.expectState(transitioningTo(target), jReconciling)
			suspend(w, "main@sha1:r9") // waits for the cut-over
			w.expectNoop(w.step())
			w.ready(target)
			name := ChildName("orders", target)
			w.stepRejecting(applyOf(name), "forbidden")
			w.expectState(activeState(target), jFailing)
			w.expectError("in-place change of " + name + " not applied")
			if w.children[target].suspendedSpec() {
				w.fatalf("the only job was suspended: %v", w.childNames())
			}
		})
	}
}

// A refused in-place change of an active green (blue long gone) says so.
func TestRefusedInPlaceChangeOfGreen(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r3")
	w.stepRejecting(applyOf("orders-green"), "forbidden")
	w.expectState(sActiveGreen, jFailing)
	w.expectError("in-place change of orders-green not applied")
}
