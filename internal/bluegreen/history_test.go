/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// entry is what a test says about a history entry: kind, revision, from,
// to, the savepoint path, the path restored from, and the outcome.
type entry struct {
	kind          v1alpha1.RolloutKind
	rev, from, to string
	sp, restored  string
	outcome       v1alpha1.RolloutOutcome
}

const (
	kFirst      = v1alpha1.RolloutFirst
	kBlueGreen  = v1alpha1.RolloutBlueGreen
	kInPlace    = v1alpha1.RolloutInPlace
	oRunning    = v1alpha1.RolloutInProgress
	oOK         = v1alpha1.RolloutSucceeded
	oAborted    = v1alpha1.RolloutAborted
	oSuperseded = v1alpha1.RolloutSuperseded
	oFailed     = v1alpha1.RolloutFailed
)

func (w *world) expectHistory(want ...entry) {
	w.t.Helper()
	var got []entry
	for _, r := range w.status().History {
		got = append(got, entry{r.Kind, r.Revision, r.From, r.To, r.SavepointPath, r.RestoredFrom, r.Outcome})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		w.fatalf("history\n got %+v\nwant %+v", got, want)
	}
}

// newest is the newest history entry.
func (w *world) newest() v1alpha1.RolloutRecord {
	w.t.Helper()
	h := w.status().History
	if len(h) == 0 {
		w.fatalf("no history")
	}
	return h[len(h)-1]
}

const (
	r1, r2, r3 = "main@sha1:r1", "main@sha1:r2", "main@sha1:r3"
	blue       = "orders-blue"
	green      = "orders-green"
)

func TestHistoryOfAFirstDeploymentAndAStatefulTransition(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "/user/sp-0", oRunning})
	started := w.newest().StartedAt
	w.advance(time.Minute)
	w.ready(Blue)
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "/user/sp-0", oOK})
	if first := w.newest(); !first.StartedAt.Equal(&started) || !first.FinishedAt.Time.Equal(t0.Add(time.Minute)) {
		w.fatalf("first deployment started %v finished %v", first.StartedAt, first.FinishedAt)
	}

	newImage(w, "flink:1.20.1", r2)
	w.step()
	name := w.status().Savepoint.Name
	if w.newest().SavepointName != name {
		w.fatalf("entry names savepoint %q, status %q", w.newest().SavepointName, name)
	}
	w.expectHistory(entry{kFirst, r1, "", blue, "", "/user/sp-0", oOK}, entry{kBlueGreen, r2, blue, green, "", "", oRunning})
	w.step() // the savepoint is pending: nothing to record
	path := w.completeSnapshot()
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "/user/sp-0", oOK}, entry{kBlueGreen, r2, blue, green, path, path, oRunning})
	w.ready(Green)
	w.step()
	w.gone()
	w.expectNoop(w.step())
	w.expectHistory(entry{kFirst, r1, "", blue, "", "/user/sp-0", oOK}, entry{kBlueGreen, r2, blue, green, path, path, oOK})
	if r := w.newest(); r.FinishedAt == nil || r.Reason != "" || r.SavepointName != name {
		w.fatalf("finished transition: %+v", r)
	}
}

func TestHistoryOfAStatelessTransitionRestoresFromTheTemplatePath(t *testing.T) {
	for _, path := range []string{"", "/user/sp-0"} {
		w := newWorld(t, v1alpha1.UpgradeModeStateless)
		w.parent.Spec.Template.Spec.Job.InitialSavepointPath = path
		w.step()
		w.ready(Blue)
		w.step()
		newImage(w, "flink:1.20.1", r2)
		w.step()
		w.expectHistory(entry{kFirst, r1, "", blue, "", path, oOK}, entry{kBlueGreen, r2, blue, green, "", path, oRunning})
		if w.newest().SavepointName != "" {
			w.fatalf("a stateless transition takes no savepoint: %+v", w.newest())
		}
	}
}

// An abort ends the entry with the sentence of status.error, and the JOB
// column (activeJobState) shows the job that runs: blue, RUNNING, while
// jobStatus.state reports the rollout FAILING.
func TestHistoryOfAnAbortedTransition(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	path := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Green)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectHistory(entry{kFirst, r1, "", blue, "", "", oOK}, entry{kBlueGreen, r2, blue, green, path, path, oAborted})
	if r := w.newest(); r.Reason != w.status().Error || !strings.Contains(r.Reason, "aborted") || r.FinishedAt == nil {
		w.fatalf("aborted entry %+v, error %q", r, w.status().Error)
	}
	if got := w.status().ActiveJobState; got != JobRunning {
		w.fatalf("activeJobState = %q, want RUNNING", got)
	}
	for i := 0; i < 3; i++ {
		w.advance(time.Hour)
		w.expectNoop(w.step())
	}
	if n := len(w.status().History); n != 2 {
		w.fatalf("idle reconciles changed the history: %d entries", n)
	}

	// A retry is a new rollout, with a new savepoint.
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "retry-1")
	w.step() // the suspended leftover goes first
	w.gone()
	w.step()
	if r := w.newest(); len(w.status().History) != 3 || r.Outcome != oRunning || r.SavepointName == w.status().History[1].SavepointName {
		w.fatalf("retry: %+v", w.status().History)
	}
}

func TestHistoryOfAFailedAndAnAbortedSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", r2)
	w.step()
	w.failSnapshot(SnapshotFailed, "disk full")
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "", oOK}, entry{kBlueGreen, r2, blue, green, "", "", oFailed})
	if r := w.newest(); r.Reason != w.status().Error || !strings.Contains(r.Reason, "disk full") {
		w.fatalf("failed entry %+v, error %q", r, w.status().Error)
	}

	newImage(w, "flink:1.20.2", r3)
	w.step()
	w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "", oOK}, entry{kBlueGreen, r2, blue, green, "", "", oFailed},
		entry{kBlueGreen, r3, blue, green, "", "", oAborted})
}

func TestHistoryOfInPlaceChanges(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, r2)
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "", oOK}, entry{kInPlace, r2, blue, blue, "", "", oRunning})
	w.suspendDone(Blue)
	w.step()
	resume(w, r3)
	w.step()
	w.ready(Blue)
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "", oOK}, entry{kInPlace, r2, blue, blue, "", "", oOK},
		entry{kInPlace, r3, blue, blue, "", "", oOK})
	if w.status().ActiveJobState != JobRunning {
		w.fatalf("activeJobState = %q", w.status().ActiveJobState)
	}
}

func TestHistoryOfASuspendedFirstCommit(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	w.step()
	w.expectNoop(w.step())
	w.expectHistory(entry{kFirst, r1, "", "", "", "", oOK})
	if w.status().ActiveJobState != "" {
		w.fatalf("activeJobState %q without an active child", w.status().ActiveJobState)
	}
	resume(w, r2)
	w.step()
	w.expectHistory(entry{kFirst, r1, "", "", "", "", oOK}, entry{kFirst, r2, "", blue, "", "", oRunning})
	if w.status().ActiveJobState != "" {
		w.fatalf("activeJobState %q during a first deployment", w.status().ActiveJobState)
	}
}

// A commit during a transition supersedes its rollout: the entry ends,
// and the new revision's begins with a fresh savepoint of the old colour.
func TestHistoryOfASpecChangedDuringATransition(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	path := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.2", r3)
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "", oOK}, entry{kBlueGreen, r2, blue, green, path, path, oSuperseded},
		entry{kBlueGreen, r3, blue, green, "", "", oRunning})
	h := w.status().History
	if !strings.Contains(h[1].Reason, "superseded by "+r3) || h[2].SavepointName == h[1].SavepointName || h[2].SavepointName == "" {
		w.fatalf("superseded: %+v", h)
	}
	fresh := w.completeSnapshot()
	w.gone()
	w.step() // green is created again from the fresh savepoint
	w.ready(Green)
	w.step()
	w.expectHistory(entry{kFirst, r1, "", blue, "", "", oOK}, entry{kBlueGreen, r2, blue, green, path, path, oSuperseded},
		entry{kBlueGreen, r3, blue, green, fresh, fresh, oOK})
}

// A request the API server refuses ends the rollout as Failed, with an
// entry of its own when the refused request was to start it.
func TestHistoryOfARejectedSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", r2)
	d, err := Decide(w.input())
	if err != nil || len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot {
		w.fatalf("want a savepoint: %v %s", err, describeActions(d.Actions))
	}
	in, snap := w.input(), d.Actions[0]
	in.Rejection = &Rejection{Action: snap, Message: "denied"}
	if d, err = Decide(in); err != nil {
		w.fatalf("Decide: %v", err)
	}
	w.parent.Status = d.Status
	w.expectHistory(entry{kFirst, r1, "", blue, "", "", oOK}, entry{kBlueGreen, r2, blue, green, "", "", oFailed})
	if r := w.newest(); r.Reason != w.status().Error || !strings.Contains(r.Reason, "denied") || r.SavepointName != snap.Snapshot.Name {
		w.fatalf("rejected entry %+v, error %q", r, w.status().Error)
	}
	w.expectNoop(w.step())
}

// History keeps the last MaxHistory rollouts.
func TestHistoryKeepsTheLastTen(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	for i := 2; i <= 13; i++ {
		rev := fmt.Sprintf("main@sha1:r%d", i)
		if i%2 == 0 {
			suspend(w, rev)
			w.step()
			w.suspendDone(Blue)
		} else {
			resume(w, rev)
			w.step()
			w.ready(Blue)
		}
		w.step()
	}
	h := w.status().History
	if len(h) != v1alpha1.MaxHistory || h[0].Revision != "main@sha1:r4" || h[9].Revision != "main@sha1:r13" {
		w.fatalf("history of %d from %s to %s", len(h), h[0].Revision, h[len(h)-1].Revision)
	}
}

// A commit that lands while the savepoint of the previous one is taken is
// the one rolled out once the savepoint completes (savepointDone starts
// the new colour from d.spec). The entry in progress must name that
// revision: otherwise history says r2 went live (Succeeded) while the job
// runs r3, `rollback --to r2` picks a rollout of a spec that never ran, and
// history disagrees with liveRevisions and the commit statuses (r2
// superseded).
func TestHistoryOfASpecChangedWhileTheSavepointIsTaken(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", r2)
	w.step()
	w.expectState(sSpBlue, jReconciling)
	newImage(w, "flink:1.20.2", r3)
	w.step() // still savepointing
	path := w.completeSnapshot()
	w.step()
	w.expectState(sToGreen, jReconciling)
	if g := w.mustChild(Green); g.Revision != r3 || g.Spec.Image != "flink:1.20.2" {
		w.fatalf("green runs %s %s", g.Revision, g.Spec.Image)
	}
	if r := w.newest(); r.Revision != r3 {
		w.fatalf("the rollout in progress deploys %s to %s; history says it rolls out %s: %+v", r3, green, r.Revision, w.status().History)
	}
	w.ready(Green)
	w.step()
	w.gone()
	w.step()
	st := w.status()
	if st.ActiveRevision != r3 {
		w.fatalf("active %s", st.ActiveRevision)
	}
	for _, r := range st.History {
		if r.Revision == r2 && r.Outcome == v1alpha1.RolloutSucceeded {
			w.fatalf("history says %s succeeded; it never ran (liveRevisions %v): %+v", r2, st.LiveRevisions, st.History)
		}
	}
	_ = path
}

// A commit during a stateful transition deletes the target and takes a
// fresh savepoint of the old colour. When the status write of that
// decision is lost, the target is found missing on the status of the old
// revision; the restart must still roll out the new commit from a fresh
// savepoint, history must name that revision, and no revision may
// supersede itself.
func TestHistoryOfASpecChangedDuringATransitionWhoseStatusWriteIsLost(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	first := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.2", r3)
	w.dropNext = true
	w.step() // deletes green, asks for a fresh savepoint; the status write is lost
	w.gone()
	w.step() // green missing on the old status: a fresh savepoint again
	w.expectState(sSpBlue, jReconciling)
	if r := w.newest(); r.Revision != r3 || r.Outcome != v1alpha1.RolloutInProgress {
		w.fatalf("the restart is not the rollout of %s: %+v", r3, w.status().History)
	}
	fresh := w.completeSnapshot()
	w.step()
	g := w.mustChild(Green)
	if g.Revision != r3 || g.Spec.Job.InitialSavepointPath != fresh || fresh == first {
		w.fatalf("green restarted with %s from %q, want %s from the fresh savepoint %q (first %q)",
			g.Revision, g.Spec.Job.InitialSavepointPath, r3, fresh, first)
	}
	w.ready(Green)
	w.step()
	w.gone()
	w.step()
	w.expectState(sActiveGreen, jRunning)
	for _, r := range w.status().History {
		if r.Revision == r3 && r.Outcome != v1alpha1.RolloutSucceeded {
			w.fatalf("%s did not end as the one success: %+v", r3, w.status().History)
		}
	}
}

// A rollout begun by a replica whose clock runs ahead and ended by one
// whose clock is right never finishes before it started.
func TestHistoryNeverFinishesBeforeItStarted(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	ahead := w.now
	w.now = w.now.Add(30 * time.Second) // the replica ahead
	newImage(w, "flink:1.20.1", r2)
	w.step()
	w.now = ahead // the next reconcile runs on a replica whose clock is right
	w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
	w.step()
	r := w.newest()
	if r.FinishedAt == nil || r.FinishedAt.Before(&r.StartedAt) {
		w.fatalf("rollout %s started %v, finished %v", r.Revision, r.StartedAt, r.FinishedAt)
	}
}
