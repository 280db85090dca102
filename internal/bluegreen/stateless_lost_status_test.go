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

// A stateless transition needs no savepoint: the decision that starts it
// applies the new colour at once. When its status write is lost, the next
// reconcile finds ACTIVE_BLUE, the change pending, and green running that
// change from spec.template: green is the new colour of this rollout,
// taken up again, never deleted. (Failed on the code as it was: green was
// deleted as a leftover, "LeftoverDeleted", and started again.)
func TestALostStatusWriteAfterAStatelessStartNeverDeletesTheNewColour(t *testing.T) {
	for _, readyFirst := range []bool{false, true} {
		w := deployed(t, v1alpha1.UpgradeModeStateless)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.dropNext = true
		w.step()
		w.expectState(sActiveBlue, jRunning)
		if readyFirst {
			w.ready(Green)
		}
		green := w.mustChild(Green)
		d := w.step()
		if w.deleting(d, "orders-green") {
			w.fatalf("the new colour is deleted: %s", describeActions(d.Actions))
		}
		w.expectState(sToGreen, jReconciling)
		w.ready(Green)
		w.advance(time.Second)
		w.step()
		w.gone()
		w.expectState(sActiveGreen, jRunning)
		if w.children[Green].Created != green.Created || w.children[Blue] != nil {
			w.fatalf("green not the one started first, or blue kept: %v", w.childNames())
		}
		if h := w.status().History; h[len(h)-1].Revision != "main@sha1:r2" || h[len(h)-1].Outcome != v1alpha1.RolloutSucceeded {
			w.fatalf("r2 did not succeed: %+v", h[len(h)-1])
		}
	}
}

// deleting reports whether d deletes the child named name.
func (w *world) deleting(d Decision, name string) bool {
	for _, a := range d.Actions {
		if deleteOf(name)(a) {
			return true
		}
	}
	return false
}
