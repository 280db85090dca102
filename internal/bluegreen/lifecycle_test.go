/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The state lifecycle at the level of Decide: what a deletion keeps, and
// where the first job of a new object starts from.

func (w *world) deleteParent() {
	w.parent.DeletionTimestamp = &metav1.Time{Time: w.now}
	w.parent.Finalizers = []string{v1alpha1.FinalSavepointFinalizer}
}

// recordAsked is the state record the decision asks for, nil when none.
func recordAsked(d Decision) *SnapshotSpec {
	for _, a := range d.Actions {
		if a.Type == CreateSnapshot && a.Snapshot.Record != nil {
			return a.Snapshot
		}
	}
	return nil
}

func deletes(d Decision, name string) bool {
	for _, a := range d.Actions {
		if a.Type == DeleteChild && a.ChildName == name {
			return true
		}
	}
	return false
}

func TestDeletionSavepointsTheRunningJobBeforeItsChildrenGo(t *testing.T) {
	for _, mode := range []string{v1alpha1.UpgradeModeSavepoint, v1alpha1.UpgradeModeLastState} {
		t.Run(mode, func(t *testing.T) {
			w := deployed(t, mode)
			w.deleteParent()
			d := w.step()
			rec := recordAsked(d)
			if rec == nil || rec.JobName != "orders-blue" || rec.Name != FinalSnapshotName(w.parent) || rec.Revision != r1 {
				w.fatalf("want the final savepoint of orders-blue, got %s", describeActions(d.Actions))
			}
			if deletes(d, "orders-blue") || d.Finalize {
				w.fatalf("the job goes before its savepoint: %s finalize=%v", describeActions(d.Actions), d.Finalize)
			}
			w.expectNoop(w.step()) // waiting
			path := w.completeSnapshot()
			d = w.step()
			if !deletes(d, "orders-blue") || !d.Finalize {
				w.fatalf("after the final savepoint: %s finalize=%v", describeActions(d.Actions), d.Finalize)
			}
			if m := eventMessage(d, "FinalSavepointCompleted"); !strings.Contains(m, path) {
				w.fatalf("event %q does not name the savepoint %s", m, path)
			}
		})
	}
}

func TestDeletionDuringATransitionDeletesTheNewColourAndSavepointsTheOld(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	transition := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.deleteParent()
	d := w.step()
	if !deletes(d, "orders-green") || deletes(d, "orders-blue") {
		w.fatalf("want green deleted at once and blue kept: %s", describeActions(d.Actions))
	}
	rec := recordAsked(d)
	if rec == nil || rec.JobName != "orders-blue" || !strings.HasSuffix(rec.Record.LastCompleted, transition) {
		w.fatalf("want the final savepoint of orders-blue, last completed %s: %+v", transition, rec)
	}
	if r := w.newest(); r.Outcome != v1alpha1.RolloutAborted {
		w.fatalf("the transition under way should end aborted: %+v", r)
	}
}

func TestDeletionNeverWaitsPastTheSavepointTimeout(t *testing.T) {
	for _, fate := range []string{"hangs", "fails"} {
		t.Run(fate, func(t *testing.T) {
			w := deployed(t, v1alpha1.UpgradeModeSavepoint)
			w.deleteParent()
			w.step()
			if fate == "fails" {
				w.failSnapshot(SnapshotFailed, "checkpoint coordinator down")
			} else {
				w.advance(10 * time.Minute)
			}
			d := w.step()
			if !deletes(d, "orders-blue") || !d.Finalize {
				w.fatalf("the deletion waits on a savepoint that %s: %s finalize=%v", fate, describeActions(d.Actions), d.Finalize)
			}
			if !d.Events[0].Warning && !strings.Contains(describeEvents(d.Events), "FinalSavepoint") {
				w.fatalf("no warning: %s", describeEvents(d.Events))
			}
		})
	}
}

func TestDeletionOfAStatelessJobIsAtOnce(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	w.deleteParent()
	d := w.step()
	if recordAsked(d) != nil || !deletes(d, "orders-blue") || !d.Finalize {
		w.fatalf("a stateless job: %s finalize=%v", describeActions(d.Actions), d.Finalize)
	}
}

func TestDeletionOfASuspendedJobRecordsTheSavepointItSuspendedWith(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, r2)
	w.step()
	w.suspendDone(Blue)
	w.children[Blue].UpgradeSavepointPath = "/sp/suspend-1"
	w.step()
	w.deleteParent()
	d := w.step()
	rec := recordAsked(d)
	if rec == nil || rec.Record.Existing != "/sp/suspend-1" || !deletes(d, "orders-blue") || !d.Finalize {
		w.fatalf("want /sp/suspend-1 recorded as it is, then the children gone: %s %+v", describeActions(d.Actions), rec)
	}
}

func TestRefusedFinalSavepointStillDeletesTheChildren(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteParent()
	d := w.step()
	in := w.input()
	in.Rejection = &Rejection{Action: d.Actions[0], Message: `flinkstatesnapshots is forbidden: unable to create new content in namespace prod because it is being terminated`}
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if !deletes(d, "orders-blue") || !d.Finalize || !strings.Contains(eventMessage(d, "FinalSavepointRefused"), "being terminated") {
		w.fatalf("a refused savepoint: %s finalize=%v events=%s", describeActions(d.Actions), d.Finalize, describeEvents(d.Events))
	}
}

// fresh is a world of a new object of the name, with no
// initialSavepointPath in its template.
func fresh(t *testing.T, rec *Record) *world {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = ""
	w.record = rec
	return w
}

func completedRecord() *Record {
	return &Record{Name: "orders-final-abc", Of: "orders", State: SnapshotCompleted, Path: "/sp/final-1",
		Job: "orders-green", Revision: r2, Created: t0.Add(-time.Hour)}
}

func TestFirstJobRestoresFromTheRecordOfItsName(t *testing.T) {
	w := fresh(t, completedRecord())
	d := w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/sp/final-1" {
		w.fatalf("blue starts from %q, want the record's /sp/final-1", b.Spec.Job.InitialSavepointPath)
	}
	if r := w.newest(); r.Record != "orders-final-abc" || r.RestoredFrom != "/sp/final-1" {
		w.fatalf("history does not say so: %+v", r)
	}
	if m := eventMessage(d, "StateRestored"); !strings.Contains(m, "orders-final-abc") {
		w.fatalf("event %q", m)
	}
	// Re-applied during the first deployment (a commit), it keeps the path.
	newImage(w, "flink:1.20.1", r2)
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/sp/final-1" {
		w.fatalf("re-applied blue starts from %q", b.Spec.Job.InitialSavepointPath)
	}
}

func TestInitialSavepointPathInGitWinsOverARecord(t *testing.T) {
	w := fresh(t, completedRecord())
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/chosen"
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/user/chosen" {
		w.fatalf("blue starts from %q", b.Spec.Job.InitialSavepointPath)
	}
}

func TestInitialStateEmptyStartsEmptyOnPurpose(t *testing.T) {
	w := fresh(t, completedRecord())
	w.annotate(v1alpha1.InitialStateAnnotation, v1alpha1.InitialStateEmpty)
	d := w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "" {
		w.fatalf("blue starts from %q", b.Spec.Job.InitialSavepointPath)
	}
	if r := w.newest(); !r.StartedEmpty || eventMessage(d, "StartedEmpty") == "" {
		w.fatalf("not said: %+v %s", r, describeEvents(d.Events))
	}
}

func TestRestoreFromWithoutARecordFailsUntilOneExists(t *testing.T) {
	w := fresh(t, nil)
	w.annotate(v1alpha1.RestoreFromAnnotation, "orders-old")
	d := w.step()
	if len(w.children) != 0 || w.status().JobStatus.State != v1alpha1.JobFailing || !strings.Contains(w.status().Error, "orders-old") {
		w.fatalf("want a failed first deployment naming orders-old: %s %s %q", describeActions(d.Actions), w.status().JobStatus.State, w.status().Error)
	}
	if d.RequeueAfter == 0 {
		w.fatalf("not looked at again")
	}
	rec := completedRecord()
	rec.Of = "orders-old"
	w.record = rec
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/sp/final-1" {
		w.fatalf("blue starts from %q once the record exists", b.Spec.Job.InitialSavepointPath)
	}
}

func TestRecordWhoseSavepointFailedRestoresTheLastCompletedOrBlocks(t *testing.T) {
	rec := completedRecord()
	rec.State, rec.Path, rec.Error = SnapshotFailed, "", "job not running"
	w := fresh(t, rec)
	w.step()
	if len(w.children) != 0 || w.status().JobStatus.State != v1alpha1.JobFailing {
		w.fatalf("a record with no savepoint let the job start empty: %v", w.childNames())
	}
	rec.LastCompleted = "/sp/older"
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/sp/older" {
		w.fatalf("blue starts from %q, want the last completed /sp/older", b.Spec.Job.InitialSavepointPath)
	}
}

func TestFirstJobWaitsForARecordStillBeingTaken(t *testing.T) {
	rec := completedRecord()
	rec.State, rec.Path, rec.Created = SnapshotInProgress, "", t0
	w := fresh(t, rec)
	w.step()
	if len(w.children) != 0 {
		w.fatalf("started before the record completed")
	}
	rec.State, rec.Path = SnapshotCompleted, "/sp/final-2"
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/sp/final-2" {
		w.fatalf("blue starts from %q", b.Spec.Job.InitialSavepointPath)
	}
}

func TestFirstJobDoesNotWaitForTheRecordOfAnObjectGone(t *testing.T) {
	rec := completedRecord()
	rec.State, rec.Path, rec.Created, rec.LastCompleted, rec.Final = SnapshotInProgress, "", t0, "/sp/older", true
	w := fresh(t, rec)
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/sp/older" {
		w.fatalf("blue starts from %q, want the last completed /sp/older", b.Spec.Job.InitialSavepointPath)
	}
}

func TestStatelessFirstJobIgnoresARecord(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeStateless)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = ""
	w.record = completedRecord()
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "" {
		w.fatalf("a stateless job started from %q", b.Spec.Job.InitialSavepointPath)
	}
}

func patchParallelism(w *world, p, rev string) {
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp","parallelism.default":"` + p + `"}`)
	}, rev)
}

func TestDeletionDuringAnInPlacePatchRecordsTheUpgradeSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.gone()
	w.step()
	w.expectState(sActiveGreen, jRunning)
	patchParallelism(w, "4", r3)
	w.step()
	w.expectState(sToGreen, jReconciling)
	// The Flink operator is upgrading the job: it stopped with a savepoint.
	w.children[Green].UpgradeSavepointPath = "/sp/upgrade-fresh"
	w.children[Green].LifecycleState, w.children[Green].JobState = "UPGRADING", "RECONCILING"
	w.deleteParent()
	rec := recordAsked(w.step())
	if rec == nil || rec.Record.Existing != "/sp/upgrade-fresh" {
		w.fatalf("want the patch's upgrade savepoint recorded, not the cut-over's: %+v", rec)
	}
}

// A job whose in-place change the Flink operator has not acted on yet
// (status.observedGeneration behind) still runs: its state is newer than
// any savepoint taken before, so the deletion takes a fresh one.
func TestDeletionBeforeThePatchIsObservedSavepointsTheRunningJob(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	patchParallelism(w, "4", r2)
	w.step()
	b := w.mustChild(Blue)
	b.LifecycleState, b.JobState, b.Generation, b.ObservedGeneration = LifecycleStable, JobRunning, 2, 1
	w.deleteParent()
	d := w.step()
	if rec := recordAsked(d); rec == nil || rec.Record.Existing != "" || deletes(d, "orders-blue") {
		w.fatalf("want a fresh final savepoint of the running job first: %s %+v", describeActions(d.Actions), rec)
	}
}

// A re-created object meets the children of the earlier one, still being
// deleted: it neither adopts them nor starts beside them, and starts its
// first job from the record once they are gone.
func TestRecreatedObjectWaitsForTheEarlierObjectsChildren(t *testing.T) {
	w := fresh(t, completedRecord())
	w.parent.UID = "new"
	spec := baseSpec(v1alpha1.UpgradeModeSavepoint)
	w.applyChild(&ChildSpec{Name: "orders-green", Color: Green, Spec: spec.Template.Spec})
	w.ready(Green)
	w.children[Green].Deleting, w.children[Green].Foreign = true, true
	d := w.step()
	if len(d.Actions) > 0 || w.status().BlueGreenState != "" && w.status().BlueGreenState != v1alpha1.InitializingBlue {
		w.fatalf("want a wait for orders-green to go: %s, state %s", describeActions(d.Actions), w.status().BlueGreenState)
	}
	if c := w.condition(v1alpha1.ReconcilingCondition); c == nil || c.Reason != "WaitingForEarlierChildren" {
		w.fatalf("want the wait said: %+v", c)
	}
	delete(w.children, Green)
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/sp/final-1" {
		w.fatalf("blue starts from %q, want the record's", b.Spec.Job.InitialSavepointPath)
	}
}

func TestDeletionOfAStatefulJobThatDoesNotRunLeavesARecord(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeLastState)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = ""
	w.children[Blue].Spec.Job.InitialSavepointPath = ""
	w.children[Blue].JobState = "RESTARTING"
	w.deleteParent()
	d := w.step()
	if rec := recordAsked(d); rec == nil || d.Finalize || deletes(d, "orders-blue") {
		w.fatalf("a restarting stateful job with no known savepoint: %s finalize=%v", describeActions(d.Actions), d.Finalize)
	}
	w.failSnapshot(SnapshotFailed, "job not running")
	d = w.step()
	if !d.Finalize || !strings.Contains(eventMessage(d, "FinalSavepointFailed"), "does not start until") {
		w.fatalf("the failed record should say the next one does not start empty: %s", describeEvents(d.Events))
	}
}

// A deletion first seen long after it was made (the controller was down)
// still asks for a final savepoint; the timeout counts from that request,
// and when it passes, the last completed savepoint is recorded.
func TestDeletionFirstSeenLateStillTakesAFinalSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.children[Blue].UpgradeSavepointPath = "/sp/upgrade-1"
	w.deleteParent()
	w.advance(11 * time.Minute)
	d := w.step()
	if rec := recordAsked(d); rec == nil || rec.Record.Existing != "" || d.Finalize {
		w.fatalf("want a fresh final savepoint asked for: %s %+v finalize=%v", describeActions(d.Actions), rec, d.Finalize)
	}
	w.advance(11 * time.Minute)
	d = w.step()
	if !d.Finalize || !strings.Contains(eventMessage(d, "FinalSavepointTimedOut"), "/sp/upgrade-1") {
		w.fatalf("want the deletion to end past the timeout, naming /sp/upgrade-1: %s", describeEvents(d.Events))
	}
}

func TestRefusedDeleteOfTheOtherColourKeepsTheFinalSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.deleteParent()
	in := w.input()
	d, _ := Decide(in)
	var del Action
	for _, a := range d.Actions {
		if a.Type == DeleteChild {
			del = a
		}
	}
	in.Rejection = &Rejection{Action: del, Message: "admission webhook denied"}
	d, _ = Decide(in)
	if d.Finalize || recordAsked(d) == nil || deletes(d, "orders-blue") {
		w.fatalf("a refused delete of %s gave up blue's final savepoint: %s finalize=%v", del.ChildName, describeActions(d.Actions), d.Finalize)
	}
}

func TestDeletionSavepointsTheNewColourWhenOnlyItRuns(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.failChild(Blue)
	w.step()
	w.deleteParent()
	d := w.step()
	if rec := recordAsked(d); rec == nil || rec.JobName != "orders-green" || deletes(d, "orders-green") {
		w.fatalf("want the final savepoint of green, the job that runs: %s", describeActions(d.Actions))
	}
}

func TestRestoreFromWaitsWhileTheNamedObjectLives(t *testing.T) {
	rec := completedRecord()
	rec.Of, rec.Created = "orders-old", t0.Add(-90*24*time.Hour)
	w := fresh(t, rec)
	w.annotate(v1alpha1.RestoreFromAnnotation, "orders-old")
	w.restoreSourceLive = true
	d := w.step()
	if len(w.children) != 0 || w.status().JobStatus.State == v1alpha1.JobFailing || len(d.Events) != 0 {
		w.fatalf("started or failed while orders-old still runs: %v %s %s", w.childNames(), w.status().JobStatus.State, describeEvents(d.Events))
	}
	w.restoreSourceLive = false
	rec.Path, rec.Created, rec.Final = "/sp/final-new", t0, true
	w.step()
	if b := w.mustChild(Blue); b.Spec.Job.InitialSavepointPath != "/sp/final-new" {
		w.fatalf("blue starts from %q, want the record of the deletion", b.Spec.Job.InitialSavepointPath)
	}
}

func TestUnknownInitialStateFailsTheFirstDeploymentClearly(t *testing.T) {
	w := fresh(t, completedRecord())
	w.annotate(v1alpha1.InitialStateAnnotation, "none")
	w.step()
	if len(w.children) != 0 || w.status().JobStatus.State != v1alpha1.JobFailing || !strings.Contains(w.status().Error, `"none"`) {
		w.fatalf("initial-state: none: %v %s %q", w.childNames(), w.status().JobStatus.State, w.status().Error)
	}
}

// A child something else deletes first (a foreground deletion of the
// parent, a child deleted by hand) cannot be savepointed any more: its
// last completed savepoint is recorded, or, with none known, a record
// that holds none, so that a later object does not start empty.
func TestHolderDeletedFirstStillLeavesARecord(t *testing.T) {
	t.Run("last savepoint known", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		w.children[Blue].UpgradeSavepointPath = "/sp/upgrade-1"
		w.children[Blue].Deleting = true
		w.deleteParent()
		d := w.step()
		rec := recordAsked(d)
		if rec == nil || rec.Record.Existing != "/sp/upgrade-1" || !d.Finalize || eventMessage(d, "ChildDeletedFirst") == "" {
			w.fatalf("want /sp/upgrade-1 recorded and a warning: %s %+v %s", describeActions(d.Actions), rec, describeEvents(d.Events))
		}
	})
	t.Run("no savepoint known", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeLastState)
		w.parent.Spec.Template.Spec.Job.InitialSavepointPath = ""
		w.children[Blue].Spec.Job.InitialSavepointPath = ""
		w.children[Blue].Deleting = true
		w.deleteParent()
		d := w.step()
		rec := recordAsked(d)
		if rec == nil || rec.Record.Existing != "" || !d.Finalize || !strings.Contains(eventMessage(d, "ChildDeletedFirst"), "does not start until") {
			w.fatalf("want a record that holds no savepoint: %s %+v %s", describeActions(d.Actions), rec, describeEvents(d.Events))
		}
		if d = w.step(); recordAsked(d) != nil || eventMessage(d, "ChildDeletedFirst") != "" {
			w.fatalf("recorded twice: %s %s", describeActions(d.Actions), describeEvents(d.Events))
		}
	})
}

// A foreground deletion whose garbage collector removes the children
// before the controller first sees the deletion leaves no child to read:
// the record is taken from what the status says ran, so that a later
// object of the name never starts empty for want of one.
func TestHolderGoneBeforeTheDeletionIsSeenStillLeavesARecord(t *testing.T) {
	const from = "/sp/initial"
	deployedFrom := func(t *testing.T, path string) *world {
		w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
		w.parent.Spec.Template.Spec.Job.InitialSavepointPath = path
		w.step()
		w.ready(Blue)
		w.step()
		return w
	}
	t.Run("first job, started from the template's savepoint", func(t *testing.T) {
		w := deployedFrom(t, from)
		d := gcDeletesAll(w)
		rec := recordAsked(d)
		if rec == nil || rec.JobName != "orders-blue" || rec.Record.Existing != from || rec.Revision != r1 ||
			!d.Finalize || eventMessage(d, "ChildDeletedFirst") == "" {
			w.fatalf("want %q recorded for orders-blue and a warning: %s %+v %s", from, describeActions(d.Actions), rec, describeEvents(d.Events))
		}
		if d = w.step(); recordAsked(d) != nil {
			w.fatalf("recorded twice: %s", describeActions(d.Actions))
		}
	})
	t.Run("after a blue/green transition, the savepoint green started from", func(t *testing.T) {
		w, sp := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
		d := gcDeletesAll(w)
		if rec := recordAsked(d); sp == "" || rec == nil || rec.JobName != "orders-green" || rec.Record.Existing != sp {
			w.fatalf("want %q recorded for orders-green: %s %+v", sp, describeActions(d.Actions), rec)
		}
	})
	t.Run("an in-place change since, even one that failed: no savepoint known", func(t *testing.T) {
		w := deployedFrom(t, from)
		w.status().History = append(w.status().History, v1alpha1.RolloutRecord{Kind: v1alpha1.RolloutInPlace,
			From: "orders-blue", To: "orders-blue", Outcome: v1alpha1.RolloutFailed, Reason: "the job failed", Revision: r2,
			StartedAt: metav1.Time{Time: w.now}, FinishedAt: &metav1.Time{Time: w.now}})
		d := gcDeletesAll(w)
		rec := recordAsked(d)
		if rec == nil || rec.Record.Existing != "" || !strings.Contains(eventMessage(d, "ChildDeletedFirst"), "does not start until") {
			w.fatalf("want a record that holds no savepoint: %s %+v %s", describeActions(d.Actions), rec, describeEvents(d.Events))
		}
	})
	t.Run("during a transition, the savepoint it took", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		sp := startTransition(w, v1alpha1.UpgradeModeSavepoint)
		d := gcDeletesAll(w)
		if rec := recordAsked(d); sp == "" || rec == nil || rec.JobName != "orders-blue" || rec.Record.Existing != sp {
			w.fatalf("want %q recorded for orders-blue: %s %+v", sp, describeActions(d.Actions), rec)
		}
	})
	t.Run("stateless: nothing to record", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeStateless)
		if d := gcDeletesAll(w); recordAsked(d) != nil || !d.Finalize {
			w.fatalf("want no record and the finalizer gone: %s", describeActions(d.Actions))
		}
	})
}

// A job restarting goes on from state newer than its last savepoint: the
// deletion asks it for a fresh one, and keeps the last completed one only
// if that fails.
func TestDeletionOfARestartingJobAsksForAFreshSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.children[Blue].UpgradeSavepointPath = "/sp/upgrade-1"
	w.children[Blue].LifecycleState, w.children[Blue].JobState = "DEPLOYED", "RESTARTING"
	w.deleteParent()
	d := w.step()
	rec := recordAsked(d)
	if rec == nil || rec.Record.Existing != "" || rec.Record.LastCompleted != "/sp/upgrade-1" || d.Finalize {
		w.fatalf("want a fresh savepoint asked, /sp/upgrade-1 kept beside it: %s %+v", describeActions(d.Actions), rec)
	}
	w.failSnapshot(SnapshotFailed, "job not running")
	d = w.step()
	if !d.Finalize || !strings.Contains(eventMessage(d, "FinalSavepointFailed"), "/sp/upgrade-1") || recordAsked(d) != nil {
		w.fatalf("want the deletion to end naming /sp/upgrade-1, with no second record: %s %s", describeActions(d.Actions), describeEvents(d.Events))
	}
}

func TestRestoreFromItsOwnNameWithoutARecordFails(t *testing.T) {
	w := fresh(t, nil)
	w.annotate(v1alpha1.RestoreFromAnnotation, "orders")
	w.step()
	if len(w.children) != 0 || w.status().JobStatus.State != v1alpha1.JobFailing || !strings.Contains(w.status().Error, "bggitops.dev/restore-from names orders") {
		w.fatalf("a restore asked for started with no record: %v %q", w.childNames(), w.status().Error)
	}
}

// A deletion's forced end (the adapter's, on errors that last) counts
// from the latest of the deletion, the moment it was first seen and the
// final savepoint's request.
func TestDeletionOverdueCountsFromWhenTheDeletionWasSeenAndAsked(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteParent()
	deleted := w.now
	limit := 10*time.Minute + 15*time.Second // the savepoint timeout and the reschedule interval
	if !DeletionOverdue(w.parent, deleted, deleted.Add(limit)) || DeletionOverdue(w.parent, deleted, deleted.Add(limit-time.Second)) {
		t.Fatalf("from the deletion: not overdue at %s", limit)
	}
	seen := deleted.Add(time.Hour) // the controller was down
	if DeletionOverdue(w.parent, seen, seen.Add(time.Second)) || !DeletionOverdue(w.parent, seen, seen.Add(limit)) {
		t.Fatal("a deletion first seen late is overdue before its whole deadline")
	}
	w.advance(2 * time.Hour)
	w.step() // asks for the final savepoint now
	asked := w.now
	if DeletionOverdue(w.parent, seen, asked.Add(time.Second)) || !DeletionOverdue(w.parent, seen, asked.Add(limit)) {
		t.Fatal("not counted from the final savepoint's request")
	}
}

// The final record holds the savepoint the transition took: when the
// final savepoint fails, the event names it, and no older one is
// recorded over it.
func TestFailedFinalSavepointDuringATransitionKeepsTheTransitionSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.children[Blue].UpgradeSavepointPath = "/sp/upgrade-0" // an earlier in-place upgrade
	transition := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.deleteParent()
	rec := recordAsked(w.step())
	if rec == nil || !strings.HasSuffix(rec.Record.LastCompleted, transition) {
		w.fatalf("the final record should carry the transition savepoint: %+v", rec)
	}
	w.failSnapshot(SnapshotFailed, "checkpoint coordinator down")
	d := w.step()
	if later := recordAsked(d); later != nil {
		w.fatalf("a second record over the final one: %+v", later)
	}
	if m := eventMessage(d, "FinalSavepointFailed"); !strings.Contains(m, transition) {
		w.fatalf("the event names another savepoint than the record holds: %q", m)
	}
}

// A suspend the Flink operator has not acted on yet leaves the job
// running: its state is newer than any savepoint, so the deletion asks
// for a fresh one rather than recording an old one.
func TestDeletionWhileASuspendIsUnobservedSavepointsTheRunningJob(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.children[Blue].UpgradeSavepointPath = "/sp/upgrade-0"
	suspend(w, r2)
	w.step()
	b := w.mustChild(Blue)
	b.Generation, b.ObservedGeneration = 2, 1
	b.LifecycleState, b.JobState = LifecycleStable, JobRunning
	w.deleteParent()
	d := w.step()
	if rec := recordAsked(d); rec == nil || rec.Record.Existing != "" || deletes(d, "orders-blue") {
		w.fatalf("want a fresh final savepoint of the running job: %s %+v", describeActions(d.Actions), rec)
	}
}

// A spec.configuration Decide refuses (a bad duration) does not stop a
// deletion from savepointing: it runs on the default timers.
func TestDeletionWithABadTimerStillTakesAFinalSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.AbortGracePeriodKey, "ten minutes-ish")
	w.deleteParent()
	d, err := Decide(w.input())
	if err != nil {
		t.Fatalf("the deletion of a running stateful job is refused: %v", err)
	}
	if rec := recordAsked(d); rec == nil || rec.JobName != "orders-blue" {
		t.Fatalf("want a final savepoint of orders-blue: %s", describeActions(d.Actions))
	}
}

// Once the final savepoint is asked for, the status proves when the
// deletion was seen: a replica that starts later moves the forced end of
// the deletion no further.
func TestDeletionOverdueIsNotPostponedByAReplicaThatStartsLater(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteParent()
	deleted := w.now
	w.step()
	limit := 10*time.Minute + 15*time.Second
	if !DeletionOverdue(w.parent, deleted.Add(9*time.Minute), deleted.Add(limit)) {
		t.Fatal("a replica that first saw the deletion later postponed its forced end")
	}
}

// A final snapshot deleted while it is awaited and asked for again gets
// no new timeout: the deadline counts from the first request.
func TestRecreatedFinalSnapshotKeepsTheFirstDeadline(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteParent()
	w.step()
	name := FinalSnapshotName(w.parent)
	w.snaps[name].Created = w.now
	w.advance(9 * time.Minute)
	delete(w.snaps, name)
	if d := w.step(); recordAsked(d) == nil {
		w.fatalf("want it asked again: %s", describeActions(d.Actions))
	}
	w.snaps[name].Created = w.now
	w.advance(time.Minute + 16*time.Second)
	if d := w.step(); !d.Finalize {
		w.fatalf("still waiting past the timeout of the first request (requeue %s)", d.RequeueAfter)
	}
}

// With the status lost and the children already being deleted (a
// foreground cascade), the last savepoint known is still recorded.
func TestLostStatusAndAHolderDeletedFirstStillLeaveARecord(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.children[Blue].UpgradeSavepointPath = "/sp/upgrade-1"
	w.parent.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{}
	w.children[Blue].Deleting = true
	w.deleteParent()
	d := w.step()
	if rec := recordAsked(d); rec == nil || rec.Record.Existing != "/sp/upgrade-1" {
		w.fatalf("the stateful job goes with no record: %s finalize=%v", describeActions(d.Actions), d.Finalize)
	}
}
