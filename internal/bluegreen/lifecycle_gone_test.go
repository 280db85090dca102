/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strconv"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The deletion of a FlinkBlueGreenDeployment first seen after every child
// of it is gone (a foreground deletion's garbage collector, the Flink
// operator letting go first): the record is taken from what the status
// says ran, never from a colour that did not, nor from older state than
// the status knows.

// gcDeletesAll: the garbage collector of a foreground deletion removed
// every child before the controller saw the deletion.
func gcDeletesAll(w *world) Decision {
	for _, ch := range w.children {
		ch.Deleting, w.byHand[ch.Name] = true, true
	}
	w.gone()
	w.deleteParent()
	return w.step()
}

// An orphaning deletion the garbage collector has already carried out
// (children owned by nothing, orphan finalizer gone) when the controller
// first sees it: the jobs run on, nothing was deleted first.
func TestAnOrphaningDeletionCarriedOutBeforeItIsSeenKeepsNoRecord(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.mustChild(Blue).Unowned = true // the collector removed the owner reference ...
	w.deleteParent()                 // ... and the orphan finalizer
	d := w.step()
	if rec := recordAsked(d); rec != nil || eventMessage(d, "ChildDeletedFirst") != "" || !d.Finalize {
		w.fatalf("orders-blue runs on, orphaned; want no record and no ChildDeletedFirst: %s %+v %s",
			describeActions(d.Actions), recOf(rec), describeEvents(d.Events))
	}
}

// An in-place change under way (TRANSITIONING_TO_GREEN, green active):
// the holder is green, not blue. finalizing rewrites activeDeployment to
// the other colour before goneHolder reads it.
func TestAGoneHolderMidInPlaceChangeIsTheActiveColour(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint, func(w *world) {
		w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/sp/initial" // blue, long gone, started from it
	})
	parallelismDefault(w, "4", "main@sha1:r3")
	w.step()
	if w.status().BlueGreenState != sToGreen || w.status().ActiveDeployment != "orders-green" {
		w.fatalf("want an in-place change of green under way: %s %s", w.status().BlueGreenState, w.status().ActiveDeployment)
	}
	d := gcDeletesAll(w)
	rec := recordAsked(d)
	if rec == nil || rec.JobName != "orders-green" || rec.Record.Existing != "" {
		w.fatalf("want a record of orders-green holding no savepoint (in-place change, savepoint unknown): %s %+v",
			describeActions(d.Actions), recOf(rec))
	}
}

// A first deployment under way (TRANSITIONING_TO_BLUE, nothing active),
// started from an earlier object's record: with blue still there (being
// deleted) its path is recorded; with blue gone, a record of orders-green
// (which never existed) holding nothing, newer than the good record.
func TestAGoneHolderOfAFirstDeploymentUnderWayIsRecordedByWhatItStartedFrom(t *testing.T) {
	for _, gone := range []bool{false, true} {
		t.Run(map[bool]string{false: "blue being deleted", true: "blue gone"}[gone], func(t *testing.T) {
			w := fresh(t, completedRecord()) // blue starts from /sp/final-1
			w.step()
			w.expectState(sToBlue, jReconciling)
			var d Decision
			if gone {
				d = gcDeletesAll(w)
			} else {
				w.deleteByHand(Blue)
				w.deleteParent()
				d = w.step()
			}
			rec := recordAsked(d)
			if rec == nil || rec.JobName != "orders-blue" || rec.Record.Existing != "/sp/final-1" {
				w.fatalf("want /sp/final-1 recorded for orders-blue: %s %+v", describeActions(d.Actions), recOf(rec))
			}
		})
	}
}

// A transition that aborted after its savepoint completed: blue ran on
// after it, so that savepoint (in status.savepoint and in the history) is
// newer than the one blue started from.
func TestAGoneHolderAfterAnAbortedTransitionKeepsItsNewerSavepoint(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/sp/initial"
	w.step()
	w.ready(Blue)
	w.step()
	sp := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute) // green never ready: aborted, blue keeps running
	w.step()
	w.expectState(sActiveBlue, jFailing)
	d := gcDeletesAll(w)
	if rec := recordAsked(d); rec == nil || rec.JobName != "orders-blue" || rec.Record.Existing != sp {
		w.fatalf("want %q (a completed savepoint of blue, newer than /sp/initial) recorded: %s %+v", sp, describeActions(d.Actions), recOf(rec))
	}
}

// A blue/green transition whose old colour was deleted by hand (cut
// over in place) and then aborted: the job that stays active started
// from the transition's savepoint, but the history's last Succeeded entry
// for it is an older generation of the same colour.
func TestAGoneHolderAfterAnAbortedCutOverKeepsWhatItsJobStartedFrom(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint, func(w *world) {
		w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/sp/initial"
	})
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	w.expectState(v1alpha1.SavepointingGreen, jReconciling)
	sp2 := w.completeSnapshot()
	w.step()
	w.expectState(sToBlue, jReconciling)
	if got := w.mustChild(Blue).Spec.Job.InitialSavepointPath; got != sp2 {
		w.fatalf("blue starts from %q, want %q", got, sp2)
	}
	w.deleteByHand(Green)
	w.step() // CutOver: blue is the active deployment
	w.gone()
	w.advance(11 * time.Minute)
	w.step() // not ready in time: aborted, blue stays active
	w.expectState(sActiveBlue, jFailing)
	d := gcDeletesAll(w)
	if rec := recordAsked(d); rec == nil || rec.JobName != "orders-blue" || rec.Record.Existing != sp2 {
		w.fatalf("want %q, the savepoint blue's job started from, recorded (not an older generation's): %s %+v",
			sp2, describeActions(d.Actions), recOf(rec))
	}
}

// A commit that makes a stateless job stateful, not yet rolled out:
// the job that ran holds no state (with the child still there nothing is
// recorded), but a record that holds nothing is kept, and the next object
// fails to start until Git says initial-state: empty.
func TestAGoneStatelessJobLeavesNoRecordWhateverGitSaysSince(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.UpgradeMode = v1alpha1.UpgradeModeSavepoint
	}, r2)
	d := gcDeletesAll(w) // the controller was down since the commit
	if rec := recordAsked(d); rec != nil {
		w.fatalf("the job that ran was stateless, want no record: %s %+v %s", describeActions(d.Actions), recOf(rec), eventMessage(d, "ChildDeletedFirst"))
	}
}

func recOf(s *SnapshotSpec) string {
	if s == nil {
		return "no record"
	}
	return "record of " + s.JobName + " existing=" + strconv.Quote(s.Record.Existing) + " lastCompleted=" + strconv.Quote(s.Record.LastCompleted)
}
