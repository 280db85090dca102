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
)

// What a commit that lands during a stateful blue/green transition does,
// when it does not need a fresh savepoint of the old colour.

func hasSnapshot(d Decision) bool {
	for _, a := range d.Actions {
		if a.Type == CreateSnapshot {
			return true
		}
	}
	return false
}

// patchOnly is blue's spec (the image it runs) with a flinkConfiguration
// change that can be patched in place.
func patchOnly(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
	s.Template.Spec.Image = "flink:1.20"
	s.Template.Spec.FlinkConfiguration = rawJSON(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp","parallelism.default":"4"}`)
}

func runsParallelism4(c *Child) bool {
	return c != nil && strings.Contains(string(c.Spec.FlinkConfiguration.Raw), "parallelism.default")
}

func TestCommitMidTransitionThatOnlyPatchesIsPatchedIntoTheOldColour(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.edit(patchOnly, r3)
	d := w.step()
	if hasSnapshot(d) {
		w.fatalf("a commit that needs no new colour took a savepoint: %s", describeActions(d.Actions))
	}
	w.expectDelete(d, "orders-green")
	w.gone()
	for i := 0; i < 3 && !runsParallelism4(w.children[Blue]); i++ {
		w.step()
	}
	if !runsParallelism4(w.children[Blue]) {
		w.fatalf("r3's patch never reached blue: %s, status %s", w.children[Blue].Spec.FlinkConfiguration.Raw, w.status().BlueGreenState)
	}
	for _, r := range w.status().History {
		if r.Revision == r3 && strings.Contains(r.Reason, "superseded by "+r3) {
			w.fatalf("%s superseded by itself: %+v", r3, w.status().History)
		}
	}
}

func TestCommitMidTransitionThatRevertsEndsItWithoutASavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20", r3) // blue's spec
	d := w.step()
	if hasSnapshot(d) {
		w.fatalf("a revert took a savepoint: %s", describeActions(d.Actions))
	}
	w.expectDelete(d, "orders-green")
	w.gone()
	w.step()
	w.expectState(sActiveBlue, jRunning)
	h := w.status().History
	if r := h[len(h)-1]; r.Revision == r3 && r.Outcome == v1alpha1.RolloutSuperseded {
		w.fatalf("the revert is recorded as aborted: %+v", h)
	}
	if r := w.historyOf("main@sha1:r2"); r == nil || r.Outcome != v1alpha1.RolloutSuperseded || strings.Contains(r.Reason, "fresh savepoint") {
		w.fatalf("r2's rollout should end superseded, with no fresh savepoint: %+v", h)
	}
}

func TestSavepointRedeployMidTransitionTakesNoSavepointOfTheOldColour(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
		s.Template.Spec.Job.InitialSavepointPath = "/user/sp-9"
	}, r3)
	w.step()
	w.gone()
	d := w.step()
	if hasSnapshot(d) {
		w.fatalf("a savepoint redeploy from /user/sp-9 took a savepoint of blue: %s", describeActions(d.Actions))
	}
	if g := w.mustChild(Green); g.Spec.Job.InitialSavepointPath != "/user/sp-9" {
		w.fatalf("green starts from %q, want the redeploy's /user/sp-9", g.Spec.Job.InitialSavepointPath)
	}
}

func TestRefusedRestartIsRecordedOnTheNewCommit(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Image = "flink:1.20.2"
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp","kubernetes.operator.savepoint.format.type":"UNKNOWN"}`)
	}, r3)
	w.step()
	h := w.status().History
	if last := h[len(h)-1]; last.Revision != r3 || last.Outcome != v1alpha1.RolloutFailed {
		w.fatalf("the refusal of r3 is not r3's failed rollout: %+v", h)
	}
	if r := w.historyOf("main@sha1:r2"); r == nil || r.Outcome != v1alpha1.RolloutSuperseded {
		w.fatalf("r2 should end superseded: %+v", h)
	}
}

func TestPromotionOfASupersededRolloutDoesNotPromoteTheNext(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	w.config(v1alpha1.DeploymentDeletionDelayKey, "1 min")
	w.step()
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.annotate(v1alpha1.PromoteRequestedAtAnnotation, "p1")
	w.step() // r2 promoted, waiting for the deletion delay
	newImage(w, "flink:1.20.2", r3)
	w.step()
	w.completeSnapshot()
	w.gone()
	w.step()
	w.ready(Green)
	w.step()
	w.advance(2 * time.Minute)
	w.step()
	if w.status().BlueGreenState == sActiveGreen {
		w.fatalf("r3 cut over in Manual mode on the promotion asked for r2")
	}
}

func TestNewColourWaitsForTheOldOneToTakeAFreshSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	first := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Blue)
	newImage(w, "flink:1.20.2", r3)
	w.step()
	w.gone()
	w.step()
	if g := w.children[Green]; g != nil {
		w.fatalf("green re-created from %q while blue, which holds the state, is down", g.Spec.Job.InitialSavepointPath)
	}
	w.ready(Blue)
	d := w.step()
	if !hasSnapshot(d) {
		w.fatalf("blue runs again and takes no fresh savepoint: %s", describeActions(d.Actions))
	}
	fresh := w.completeSnapshot()
	w.step()
	if g := w.mustChild(Green); g.Spec.Job.InitialSavepointPath != fresh || fresh == first {
		w.fatalf("green starts from %q, want the fresh savepoint %q", g.Spec.Job.InitialSavepointPath, fresh)
	}
}

func TestNewColourWaitingForTheOldOneAbortsAtTheDeadline(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Blue)
	newImage(w, "flink:1.20.2", r3)
	w.step()
	w.gone()
	w.step()
	w.advance(time.Hour)
	w.step()
	if w.status().BlueGreenState != sActiveBlue || w.children[Green] != nil {
		w.fatalf("the wait outlived the abort deadline: %s, children %v", w.status().BlueGreenState, w.childNames())
	}
}

// historyOf is the newest entry of status.history for rev, nil when none.
func (w *world) historyOf(rev string) *v1alpha1.RolloutRecord {
	h := w.status().History
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Revision == rev {
			return &h[i]
		}
	}
	return nil
}
