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

var closedWindow = Window{Open: false, Description: "outside rollout window"}

// The rollout window closes while green, started for r2, comes up; r3 (a
// new image) lands after it closed. No new colour starts for r3: green
// is neither deleted nor re-specced, the transition of r2 cuts over, and
// r3 then waits for the window; once it opens, r3 rolls out.
func TestACommitAfterTheWindowClosedStartsNoNewColourMidTransition(t *testing.T) {
	for _, mode := range []string{v1alpha1.UpgradeModeSavepoint, v1alpha1.UpgradeModeStateless} {
		t.Run(mode, func(t *testing.T) {
			w := deployed(t, mode)
			startTransition(w, mode)
			w.window = closedWindow
			newImage(w, "flink:1.20.2", "main@sha1:r3")
			d := w.step()
			if w.deleting(d, "orders-green") || len(d.Actions) > 0 {
				w.fatalf("r3, committed after the window closed, acted on the transition: %s", describeActions(d.Actions))
			}
			w.ready(Green)
			w.step()
			w.gone()
			w.step()
			w.expectState(sActiveGreen, jRunning)
			if g := w.mustChild(Green); g.Revision != "main@sha1:r2" || g.Spec.Image != "flink:1.20.1" {
				w.fatalf("green runs %s (%s), want r2's spec", g.Revision, g.Spec.Image)
			}
			w.expectCondition(v1alpha1.ReconcilingCondition, "True", "WaitingForRolloutWindow", "")
			w.expectChildren(Green)

			w.window = Window{Open: true}
			w.step()
			if mode == v1alpha1.UpgradeModeStateless {
				w.expectState(sToBlue, jReconciling)
			} else {
				w.expectState(v1alpha1.SavepointingGreen, jReconciling)
			}
		})
	}
}

// The rollout window closes while the savepoint for r2 is taken, and r3
// lands after it closed: once the savepoint completes, no new colour
// starts (neither r2's, which r3 superseded, nor r3's): blue stays active
// and r3 waits for the window.
func TestACommitAfterTheWindowClosedStartsNoNewColourWhileSavepointing(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.expectState(sSpBlue, jReconciling)
	w.window = closedWindow
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.advance(5 * time.Second)
	w.completeSnapshot()
	d := w.step()
	if w.children[Green] != nil {
		w.fatalf("a new colour started after the window closed: %s", describeActions(d.Actions))
	}
	w.expectState(sActiveBlue, jRunning)
	w.expectCondition(v1alpha1.ReconcilingCondition, "True", "WaitingForRolloutWindow", "")
	h := w.status().History
	if r := h[len(h)-1]; r.Revision != "main@sha1:r2" || r.Outcome != v1alpha1.RolloutSuperseded {
		w.fatalf("r2's rollout: %+v", r)
	}
}

// A commit that landed while the window was open is the transition's,
// also when the window closes before the savepoint completes: green
// starts with it.
func TestACommitInsideTheWindowStillStartsItsNewColour(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.window = closedWindow
	w.completeSnapshot()
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.expectChildren(Blue, Green)
}
