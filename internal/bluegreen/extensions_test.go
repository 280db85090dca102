/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"reflect"
	"strings"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// bg-gitops extensions beyond FLIP-503.

func TestSavepointTimeout(t *testing.T) {
	for _, tc := range []struct {
		cfg   string
		after time.Duration
	}{{"", 10 * time.Minute}, {"30 s", 30 * time.Second}} {
		t.Run("timeout="+tc.cfg, func(t *testing.T) {
			w := deployed(t, v1alpha1.UpgradeModeLastState)
			if tc.cfg != "" {
				w.config(v1alpha1.SavepointTimeoutKey, tc.cfg)
			}
			newImage(w, "flink:1.20.1", "main@sha1:r2")
			w.step()
			w.snapshot().State = SnapshotInProgress
			w.advance(tc.after - time.Second)
			w.step()
			w.expectState(sSpBlue, jReconciling)
			w.advance(time.Second)
			w.step()
			w.expectState(sActiveBlue, jFailing)
			w.expectChildren(Blue)
			if !strings.Contains(w.status().Error, "did not complete within") || !w.children[Blue].Ready() {
				w.fatalf("error %q", w.status().Error)
			}
			// A late completion changes nothing: the attempt is over.
			w.completeSnapshot()
			w.expectNoop(w.step())
		})
	}
}

func TestCutOverFinalizesForwardWhenOldGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone bool
	}{{"deleting", false}, {"gone", true}} {
		t.Run(tc.name, func(t *testing.T) {
			w := deployed(t, v1alpha1.UpgradeModeSavepoint)
			startTransition(w, v1alpha1.UpgradeModeSavepoint)
			w.ready(Green)
			w.dropNext = true // crash after deleting blue, before the status write
			w.step()
			w.expectState(sToGreen, jReconciling)
			if tc.gone {
				w.gone()
			}
			d := w.step()
			w.expectState(sActiveGreen, jRunning)
			for _, a := range d.Actions {
				if a.Type == ApplyChild {
					w.fatalf("no child may be applied when finalising forward: %s", describeActions(d.Actions))
				}
			}
		})
	}
}

func TestOldDeletedByHandMidTransitionGoesForward(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Blue)
	w.gone()
	w.advance(11 * time.Minute)
	w.step()
	// Nothing to roll back to: green is kept, never suspended.
	w.expectState(sActiveGreen, jFailing)
	if w.children[Green].suspendedSpec() {
		w.fatalf("green suspended although it is the only job")
	}
	w.ready(Green)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	w.expectState(v1alpha1.SavepointingGreen, jReconciling)
}

func TestCrashReissuesSameSnapshotName(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.dropNext = true
	d1 := w.step()
	d2 := w.step()
	if d1.Actions[0].Snapshot.Name != d2.Actions[0].Snapshot.Name || len(w.snaps) != 1 {
		w.fatalf("snapshot names differ across a crash: %s vs %s", describeActions(d1.Actions), describeActions(d2.Actions))
	}
	w.expectState(sSpBlue, jReconciling)
	// Crash after starting green: the same green is applied again.
	w.completeSnapshot()
	w.dropNext = true
	w.step()
	w.step()
	w.expectState(sToGreen, jReconciling)
}

func TestNoRetryLoopAfterAbort(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	for i := 0; i < 20; i++ {
		w.advance(time.Hour)
		w.expectNoop(w.step())
	}
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "2026-07-21T10:00:00Z")
	d := w.step()
	if len(d.Actions) != 1 || d.Actions[0].Type != DeleteChild {
		w.fatalf("retry must first delete the suspended leftover: %s", describeActions(d.Actions))
	}
	w.gone()
	d = w.step()
	w.expectState(sSpBlue, jReconciling)
	if w.status().LastHandledRetryAt != "2026-07-21T10:00:00Z" || len(d.Actions) != 1 {
		w.fatalf("retry not acknowledged or no savepoint: %s", describeActions(d.Actions))
	}
	w.failSnapshot(SnapshotFailed, "boom")
	w.step()
	w.expectState(sActiveBlue, jFailing)
	for i := 0; i < 5; i++ {
		w.advance(time.Hour)
		w.expectNoop(w.step())
	}
}

func TestRetryWithoutChangeIsAcknowledged(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	d := w.step()
	if len(d.Actions) != 0 || w.status().LastHandledRetryAt != "x1" {
		w.fatalf("retry with nothing to retry: %s %q", describeActions(d.Actions), w.status().LastHandledRetryAt)
	}
	w.expectState(sActiveBlue, jRunning)
}

func manual(w *world) {
	w.parent.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
}

func TestManualPromotion(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	manual(w)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	if len(d.Actions) != 0 || d.Events[0].Reason != "WaitingForPromotion" {
		w.fatalf("want waiting for promotion, got %s %s", describeActions(d.Actions), describeEvents(d.Events))
	}
	if c := w.condition(v1alpha1.ReconcilingCondition); c == nil || c.Reason != "WaitingForPromotion" ||
		!strings.Contains(c.Message, "waiting for promotion") {
		w.fatalf("condition: %+v", c)
	}
	for i := 0; i < 5; i++ { // far past the abort deadline
		w.advance(time.Hour)
		w.expectNoop(w.step())
	}
	w.expectChildren(Blue, Green)
	if !w.children[Blue].Ready() {
		w.fatalf("blue must keep running")
	}
	w.annotate(v1alpha1.PromoteRequestedAtAnnotation, "p1")
	d = w.step()
	w.expectState(sActiveGreen, jRunning)
	if w.status().LastHandledPromoteAt != "p1" || len(d.Actions) != 1 || d.Actions[0].Type != DeleteChild {
		w.fatalf("promotion: %s %+v", describeActions(d.Actions), w.status())
	}
}

func TestPromoteBeforeReadyIsHonouredWhenReady(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	manual(w)
	startTransition(w, v1alpha1.UpgradeModeStateless)
	w.annotate(v1alpha1.PromoteRequestedAtAnnotation, "p1")
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
}

func TestIdleRequestsAreAcknowledgedAndIgnored(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	manual(w)
	w.annotate(v1alpha1.PromoteRequestedAtAnnotation, "p0")
	w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a0")
	w.step()
	if w.status().LastHandledPromoteAt != "p0" || w.status().LastHandledAbortAt != "a0" {
		w.fatalf("not acknowledged: %+v", w.status())
	}
	// An old promotion does not pre-approve the next transition.
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.expectState(sToGreen, jReconciling)
}

func TestAbortRequest(t *testing.T) {
	t.Run("waiting for promotion", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		manual(w)
		startTransition(w, v1alpha1.UpgradeModeSavepoint)
		w.ready(Green)
		w.step()
		w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
		w.step()
		w.expectState(sActiveBlue, jFailing)
		if !w.children[Green].suspendedSpec() || !w.children[Blue].Ready() || w.status().LastHandledAbortAt != "a1" {
			w.fatalf("abort: %v %+v", w.childNames(), w.status())
		}
		w.expectNoop(w.step())
	})
	t.Run("while savepointing", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
		w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectChildren(Blue)
		w.completeSnapshot()
		w.expectNoop(w.step())
	})
}

func TestRolloutWindow(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	opens := w.now.Add(3 * time.Hour)
	w.window = Window{OpensAt: opens, Description: "waiting for rollout window 02:00–04:00 Europe/Berlin"}
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	w.expectState(sActiveBlue, jRunning)
	if len(d.Actions) != 0 || d.RequeueAfter != 3*time.Hour || w.status().TargetRevision != "main@sha1:r2" {
		w.fatalf("want a visible wait until the window: %s %s", describeActions(d.Actions), d.RequeueAfter)
	}
	c := w.condition(v1alpha1.ReconcilingCondition)
	if c == nil || c.Reason != "WaitingForRolloutWindow" || !strings.Contains(c.Message, "02:00–04:00 Europe/Berlin") {
		w.fatalf("condition %+v", c)
	}
	if r := w.condition(v1alpha1.ReadyCondition); r.Status != "False" {
		w.fatalf("Ready while a rollout waits")
	}
	w.advance(time.Hour)
	w.expectNoop(w.step())
	// In-place changes are not held back by windows.
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Image = "flink:1.20" }, "main@sha1:r3")
	suspend(w, "main@sha1:r3")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.suspendDone(Blue)
	w.step()
	w.expectState(sActiveBlue, jSuspended)
	resume(w, "main@sha1:r4")
	w.step()
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	newImage(w, "flink:1.20.1", "main@sha1:r5")
	w.step()
	w.expectState(sActiveBlue, jRunning)
	w.now, w.window = opens, Window{Open: true}
	w.step()
	w.expectState(sSpBlue, jReconciling)
	if w.condition(v1alpha1.ReconcilingCondition).Reason != "Savepointing" {
		w.fatalf("condition not updated")
	}
}

func TestStatusBookkeeping(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Generation = 7
	w.step()
	if w.status().ObservedGeneration != 7 || w.status().TargetRevision != "main@sha1:r1" {
		w.fatalf("status %+v", w.status())
	}
	w.ready(Blue)
	w.step()
	ready := w.condition(v1alpha1.ReadyCondition)
	if ready.Status != "True" || w.condition(v1alpha1.ReconcilingCondition) != nil || w.condition(v1alpha1.StalledCondition) != nil {
		w.fatalf("conditions %+v", w.status().Conditions)
	}
	since := ready.LastTransitionTime
	for i := 0; i < 3; i++ {
		w.advance(time.Minute)
		in := w.input()
		d, err := Decide(in)
		if err != nil || !reflect.DeepEqual(d.Status, in.Parent.Status) || len(d.Actions)+len(d.Events) != 0 || d.RequeueAfter != 0 {
			w.fatalf("idle decision is not empty: %+v", d)
		}
		w.step()
	}
	if !w.condition(v1alpha1.ReadyCondition).LastTransitionTime.Equal(&since) {
		w.fatalf("lastTransitionTime moved while idle")
	}
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	if w.status().TransitionStartTime == nil || w.status().ActiveRevision != "main@sha1:r1" || w.status().TargetRevision != "main@sha1:r2" {
		w.fatalf("transition bookkeeping %+v", w.status())
	}
}

func TestActiveDeletedByHand(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Blue)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.gone()
	w.step()
	if !strings.Contains(w.status().Error, "retry") || w.condition(v1alpha1.StalledCondition) == nil {
		w.fatalf("want an actionable message, got %q", w.status().Error)
	}
	newImage(w, "flink:1.20.1", "main@sha1:r2") // a commit alone does not redeploy lost state
	w.expectNoop(w.step())
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "r")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
}

func TestNewChildDeletedByHandIsRecreated(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	sp := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Green)
	w.step()
	w.gone()
	w.step()
	if w.children[Green] == nil || w.children[Green].Spec.Job.InitialSavepointPath != sp || !w.children[Blue].Ready() {
		w.fatalf("green not re-created from the savepoint: %v", w.childNames())
	}
}

func TestDecideRejectsBrokenSpecs(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job = nil
	if _, err := Decide(w.input()); err == nil || !strings.Contains(err.Error(), "job is required") {
		t.Fatalf("err = %v", err)
	}
	w = newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.AbortGracePeriodKey, "ten minutes")
	if _, err := Decide(w.input()); err == nil || !strings.Contains(err.Error(), v1alpha1.AbortGracePeriodKey) {
		t.Fatalf("err = %v", err)
	}
}

func TestMidTransitionChangeToStatefulRestartsFromASavepoint(t *testing.T) {
	w := statelessTransitionMadeStateful(t)
	// Green started without blue's state: it is deleted, blue stays
	// active, and the change rolls out from a savepoint of blue.
	w.step()
	w.expectState(sActiveBlue, jReconciling)
	if g := w.children[Green]; g == nil || !g.Deleting {
		w.fatalf("green not deleted")
	}
	w.gone()
	w.step()
	w.expectState(v1alpha1.SavepointingBlue, jReconciling)
}

// The restart of a stateless transition made stateful survives a lost
// status write: the new colour, already deleted, is not reported as an
// aborted transition.
func TestRestartWithSavepointSurvivesALostStatusWrite(t *testing.T) {
	w := statelessTransitionMadeStateful(t)
	w.dropNext = true
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.gone()
	d := w.step()
	if m := eventMessage(d, "Aborted"); m != "" {
		w.fatalf("reported as aborted: %q", m)
	}
	if m := eventMessage(d, "TransitionRestarted"); !strings.Contains(m, "rolls out from a savepoint of orders-blue") {
		w.fatalf("event %q", m)
	}
	w.expectState(v1alpha1.SavepointingBlue, jReconciling)
}

// statelessTransitionMadeStateful is a stateless transition to green with
// a commit that makes the template stateful, not yet reconciled.
func statelessTransitionMadeStateful(t *testing.T) *world {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	startTransition(w, v1alpha1.UpgradeModeStateless)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.UpgradeMode = v1alpha1.UpgradeModeSavepoint
	}, "main@sha1:r3")
	return w
}
