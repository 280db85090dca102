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

// The blue/green transition: the new colour comes up, the old one is
// deleted at the cut-over, or the transition is aborted.

// In Manual mode a person ends the transition, so a ready green that stops
// being ready while it waits for promotion gets a fresh grace period: it is
// not aborted at once for a deadline that passed while it was waiting.
func TestReadyTargetThatStopsBeingReadyRearmsTheAbortDeadline(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	manual(w)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.advance(time.Hour) // the deadline armed at the start has long passed
	w.expectNoop(w.step())
	w.failChild(Green)
	w.step()
	w.expectState(sToGreen, jReconciling)
	if want := w.now.Add(10 * time.Minute); !w.status().AbortTimestamp.Time.Equal(want) {
		w.fatalf("abort deadline %v, want a fresh grace period until %v", w.status().AbortTimestamp, want)
	}
	w.advance(10*time.Minute - time.Second)
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.advance(time.Second)
	w.step()
	w.expectState(sActiveBlue, jFailing)

	// In Automatic mode the deadline is kept: a flapping job cannot hold the
	// transition open.
	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "1 h")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	deadline := w.status().AbortTimestamp.DeepCopy()
	w.ready(Green)
	w.step()
	w.advance(time.Minute)
	w.failChild(Green)
	w.step()
	if !w.status().AbortTimestamp.Equal(deadline) {
		w.fatalf("abort deadline moved to %v, want it kept at %v", w.status().AbortTimestamp, deadline)
	}
}

// A stateless transition starts from spec.template with no savepoint in
// the status — not even an earlier transition's, which a change that makes
// it stateful would otherwise restart the new colour from.
func TestStatelessTransitionCarriesNoOldSavepoint(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.UpgradeMode = v1alpha1.UpgradeModeStateless
	}, "main@sha1:r3")
	w.step()
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	w.advance(time.Hour)
	newImage(w, "flink:1.20.2", "main@sha1:r4")
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	if w.status().Savepoint != nil {
		w.fatalf("stateless transition shows savepoint %+v", w.status().Savepoint)
	}
	w.expectTime("transitionStartTime", w.status().TransitionStartTime, w.now)
	if m := eventMessage(d, "TransitionStarted"); !strings.Contains(m, "starting orders-blue from spec.template") {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "waiting for orders-blue to become ready")
	w.expectRequeue(d, 15*time.Second)
	// Made stateful mid-way: blue holds none of green's state, so cutting
	// over would lose it. Blue is deleted, green stays active, and the
	// change rolls out from a savepoint of green once blue is gone.
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.UpgradeMode = v1alpha1.UpgradeModeSavepoint
	}, "main@sha1:r5")
	d = w.step()
	if len(d.Actions) != 1 || d.Actions[0].Type != DeleteChild || d.Actions[0].ChildName != "orders-blue" {
		w.fatalf("actions %s", describeActions(d.Actions))
	}
	if m := eventMessage(d, "TransitionRestarted"); !strings.Contains(m, "orders-blue started without a savepoint of orders-green") {
		w.fatalf("event %q", m)
	}
	w.expectState(sActiveGreen, jReconciling)
	w.gone()
	w.step()
	w.expectState(v1alpha1.SavepointingGreen, jReconciling)
}

// A stateless new colour changed mid-transition is re-applied at once,
// from the template's initialSavepointPath.
func TestStatelessNewColourIsReappliedWithTheChange(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeStateless)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	w.ready(Blue)
	w.step()
	startTransition(w, v1alpha1.UpgradeModeStateless)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	d := w.step()
	spec := w.expectApply(d, "orders-green")
	if spec.Image != "flink:1.20.2" || spec.Job.InitialSavepointPath != "/user/sp-0" {
		w.fatalf("green re-applied with %s from %q", spec.Image, spec.Job.InitialSavepointPath)
	}
	if m := eventMessage(d, "TransitionUpdated"); !strings.Contains(m, "re-applying orders-green with main@sha1:r3") {
		w.fatalf("event %q", m)
	}
}

// A stateful new colour changed mid-way is restarted from the savepoint,
// with a fresh grace period and a report.
func TestChangeDuringATransitionRestartsTheNewColour(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(9 * time.Minute)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	d := w.step()
	w.expectDelete(d, "orders-green")
	if m := eventMessage(d, "TransitionRestarted"); !strings.Contains(m, "orders-green is deleted and starts again for main@sha1:r3 from a fresh savepoint") {
		w.fatalf("event %q", m)
	}
	if w.status().AbortTimestamp != nil {
		w.fatalf("abortTimestamp %v kept while a fresh savepoint is taken", w.status().AbortTimestamp)
	}
	w.expectTime("savepoint triggered", w.status().Savepoint.TriggerTimestamp, w.now)
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "Savepointing", "taking savepoint "+w.status().Savepoint.Name+" of orders-blue")
	w.expectRequeue(d, 15*time.Second)

	// A ready new colour changed mid-way is ready no longer.
	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "1 h")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	if w.status().DeploymentReadyTimestamp == nil {
		w.fatalf("no ready timestamp")
	}
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	if w.status().DeploymentReadyTimestamp != nil {
		w.fatalf("ready timestamp %v kept for a restarted green", w.status().DeploymentReadyTimestamp)
	}
}

// A new colour deleted by hand is waited for (and re-created) until the
// deadline; past the deadline the transition is aborted.
func TestNewColourDeletedByHand(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(time.Minute)
	w.deleteByHand(Green)
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	if len(d.Actions) != 0 {
		w.fatalf("acted on a child being deleted: %s", describeActions(d.Actions))
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "waiting for orders-green to be (re)created")
	w.expectRequeue(d, 15*time.Second)

	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.deleteByHand(Green)
	w.gone()
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectError("transition to orders-green aborted: orders-green is missing")
}

// The old colour deleted by hand mid-transition: the new colour becomes
// the active deployment at once, and the status says so once.
func TestOldColourDeletedByHandCutsOver(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Blue)
	w.gone()
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	if w.status().ActiveDeployment != "orders-green" || eventMessage(d, "CutOver") != "orders-blue is gone; orders-green is now the active deployment" {
		w.fatalf("activeDeployment %q, events %+v", w.status().ActiveDeployment, d.Events)
	}
	w.expectNoop(w.step())
}

// The deletion delay is reported while it runs.
func TestDeletionDelayIsReported(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "5 s")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForDeletionDelay",
		"orders-green is ready; deleting orders-blue at 2026-07-20T12:00:05Z")
}

// A promotion requested during the deletion delay is acknowledged at the
// cut-over, and reported once, as the promotion.
func TestPromotionDuringTheDeletionDelayIsReportedOnce(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	manual(w)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "5 s")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.annotate(v1alpha1.PromoteRequestedAtAnnotation, "p1")
	w.step()
	if w.status().LastHandledPromoteAt != "" {
		w.fatalf("promotion acknowledged before the cut-over")
	}
	w.advance(5 * time.Second)
	d := w.step()
	w.expectState(sActiveGreen, jRunning)
	w.expectEvents(d, "Promoted")
	if w.status().LastHandledPromoteAt != "p1" {
		w.fatalf("promotion not acknowledged")
	}
}

// An abort requested while green waits for promotion is reported once.
func TestAbortRequestIsReportedOnce(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	manual(w)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
	d := w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectEvents(d, "Aborted")
}
