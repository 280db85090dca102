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

// The savepoint of the active colour that a stateful transition starts
// the new colour from.

// A savepoint is started with a report: the target revision, the start of
// the transition, the job it is taken of; while it is pending nothing is
// done but polling, and a snapshot lost before the status write is asked
// for again under the same name.
func TestSavepointStartIsReported(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.advance(time.Minute)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	w.expectState(sSpBlue, jReconciling)
	st := w.status()
	name := st.Savepoint.Name
	if st.TargetRevision != "main@sha1:r2" {
		w.fatalf("targetRevision %q", st.TargetRevision)
	}
	w.expectTime("transitionStartTime", st.TransitionStartTime, w.now)
	w.expectEvents(d, "SavepointStarted")
	if m, want := eventMessage(d, "SavepointStarted"), "taking savepoint "+name+" of orders-blue (job job0001) to roll out main@sha1:r2"; m != want {
		w.fatalf("event %q, want %q", m, want)
	}
	w.expectRequeue(d, 15*time.Second)
	d = w.step()
	if len(d.Actions) != 0 {
		w.fatalf("a pending savepoint is asked for again: %s", describeActions(d.Actions))
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "Savepointing", "taking savepoint "+name+" of orders-blue")
	delete(w.snaps, name)
	d = w.step()
	if len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot || d.Actions[0].Snapshot.Name != name {
		w.fatalf("lost snapshot not asked for again: %s", describeActions(d.Actions))
	}

	// A savepoint timeout shorter than the polling interval is polled in time.
	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.SavepointTimeoutKey, "5 s")
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.expectRequeue(w.step(), 5*time.Second)
}

// The new colour of a savepoint transition starts from the savepoint, and
// the transition counts from the start of the savepoint.
func TestNewColourStartsFromTheSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	start := w.now
	w.step()
	w.advance(30 * time.Second)
	sp := w.completeSnapshot()
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	w.expectTime("transitionStartTime", w.status().TransitionStartTime, start)
	if m := eventMessage(d, "TransitionStarted"); !strings.Contains(m, "starting orders-green from savepoint "+sp) {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "waiting for orders-green to become ready")
	w.expectRequeue(d, 15*time.Second)
}

// The same from green: a savepoint of green, then blue from it.
func TestSavepointOfGreenStartsBlue(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	w.expectState(v1alpha1.SavepointingGreen, jReconciling)
	sp := w.completeSnapshot()
	w.step()
	w.expectState(sToBlue, jReconciling)
	if got := w.children[Blue].Spec.Job.InitialSavepointPath; got != sp {
		w.fatalf("blue starts from %q, want %q", got, sp)
	}
}

// A savepoint that completes after the spec went back to what the active
// job runs starts no new colour: the active colour is left as it is.
func TestSavepointCompletingAfterTheChangeWasRevertedStartsNoTransition(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.expectState(sSpBlue, jReconciling)
	newImage(w, "flink:1.20", "main@sha1:r3") // reverted
	w.completeSnapshot()
	d := w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectChildren(Blue)
	if len(d.Actions) != 0 {
		w.fatalf("want nothing done, got %s", describeActions(d.Actions))
	}
	if st := w.status(); st.ActiveDeployment != "orders-blue" || st.Error != "" {
		w.fatalf("status %+v", st)
	}
	w.expectNoop(w.step())
}

// A savepoint that completes after the spec changed to an in-place change
// patches the active colour in place instead of starting a new one.
func TestSavepointCompletingAfterAnInPlaceChangePatchesInPlace(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Image = "flink:1.20"
		s.Template.Spec.Job.AllowNonRestoredState = ptr(true)
	}, "main@sha1:r3")
	w.completeSnapshot()
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectChildren(Blue)
	if len(d.Actions) != 1 || d.Actions[0].Type != ApplyChild || d.Actions[0].Child.Name != "orders-blue" ||
		d.Actions[0].Child.Spec.Job.AllowNonRestoredState == nil {
		w.fatalf("want blue patched in place, got %s", describeActions(d.Actions))
	}
	if st := w.status(); st.ActiveDeployment != "orders-blue" || st.TargetRevision != "main@sha1:r3" {
		w.fatalf("status %+v", st)
	}
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
}

func TestRequestsWhileSavepointing(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		// Nothing to retry yet: acknowledged, and the failed savepoint is
		// not taken again because of it.
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
		d := w.step()
		w.expectEvents(d, "RetryIgnored")
		w.failSnapshot(SnapshotFailed, "boom")
		w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectNoop(w.step())
	})
	t.Run("abort", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
		d := w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectEvents(d, "Aborted")
	})
	t.Run("active deleted", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.deleteByHand(Blue)
		d := w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectEvents(d, "SavepointFailed", "ActiveDeploymentMissing")
		if m := eventMessage(d, "SavepointFailed"); !strings.Contains(m, "transition not started: active FlinkDeployment orders-blue disappeared while taking the savepoint") {
			w.fatalf("event %q", m)
		}
	})
}

// A SAVEPOINTING status that lost its savepoint record ends the attempt;
// a snapshot of another name is not this savepoint; a record without a
// trigger time counts the timeout from now.
func TestSavepointRecordDefects(t *testing.T) {
	for _, sp := range []*v1alpha1.SavepointStatus{nil, {}} {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.parent.Status.Savepoint = sp
		w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectError("the savepoint record in status.savepoint was lost")
	}

	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	name := w.status().Savepoint.Name
	in := w.input()
	in.Snapshot = &Snapshot{Name: "other", State: SnapshotCompleted, Path: "file:/sp/other"}
	d, err := Decide(in)
	if err != nil || d.Status.BlueGreenState != sSpBlue || len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot ||
		d.Actions[0].Snapshot.Name != name {
		t.Fatalf("another snapshot taken for %s: %v %s %s", name, err, d.Status.BlueGreenState, describeActions(d.Actions))
	}

	w.parent.Status.Savepoint.TriggerTimestamp = nil
	w.snapshot().State = SnapshotInProgress
	d = w.step()
	w.expectState(sSpBlue, jReconciling)
	w.expectRequeue(d, 15*time.Second)
}

// The name of the new colour still taken when the savepoint completes (a
// child that appeared meanwhile, or is still being deleted): it is
// deleted, and the new colour starts once the name is free — within the
// savepoint timeout.
func TestSavepointDoneWhileTheNewColourNameIsTaken(t *testing.T) {
	savepointing := func(t *testing.T) (*world, string) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		return w, "/sp/savepoint-" + w.status().Savepoint.Name
	}
	t.Run("a child that appeared", func(t *testing.T) {
		w, _ := savepointing(t)
		w.running(Green, t0).Spec.Job.InitialSavepointPath = "/elsewhere"
		sp := w.completeSnapshot()
		d := w.step()
		w.expectState(sSpBlue, jReconciling)
		w.expectDelete(d, "orders-green")
		w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForDeletion",
			"savepoint done; waiting for FlinkDeployment orders-green to be deleted")
		w.expectRequeue(d, 15*time.Second)
		d = w.step()
		if len(d.Actions) != 0 {
			w.fatalf("deleted again: %s", describeActions(d.Actions))
		}
		w.gone()
		w.step()
		w.expectState(sToGreen, jReconciling)
		if got := w.children[Green].Spec.Job.InitialSavepointPath; got != sp {
			w.fatalf("green starts from %q, want %q", got, sp)
		}
	})
	t.Run("not deleted in time", func(t *testing.T) {
		w, _ := savepointing(t)
		w.running(Green, t0)
		w.completeSnapshot()
		w.step()
		w.advance(10 * time.Minute)
		w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectError("FlinkDeployment orders-green was not deleted within 10m0s")
	})
	t.Run("suspended, from this savepoint", func(t *testing.T) {
		w, sp := savepointing(t)
		g := w.running(Green, t0)
		g.Spec.Job.InitialSavepointPath, g.Spec.Job.State, g.LifecycleState = sp, v1alpha1.JobStateSuspended, LifecycleSuspended
		w.completeSnapshot()
		w.expectDelete(w.step(), "orders-green")
	})
	t.Run("being deleted, from this savepoint", func(t *testing.T) {
		w, sp := savepointing(t)
		w.running(Green, t0).Spec.Job.InitialSavepointPath = sp
		w.deleteByHand(Green)
		w.completeSnapshot()
		d := w.step()
		w.expectState(sSpBlue, jReconciling)
		if len(d.Actions) != 0 {
			w.fatalf("acted on a child being deleted: %s", describeActions(d.Actions))
		}
	})
}

// A savepoint redeploy committed while the savepoint is taken starts the
// new colour from the chosen path, not from the savepoint.
func TestSavepointRedeployCommittedWhileSavepointing(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
		s.Template.Spec.Job.InitialSavepointPath = "/user/sp-9"
	}, "main@sha1:r3")
	w.completeSnapshot()
	w.step()
	w.expectState(sToGreen, jReconciling)
	if got := w.children[Green].Spec.Job.InitialSavepointPath; got != "/user/sp-9" {
		w.fatalf("green starts from %q, want /user/sp-9", got)
	}
}

// A FlinkStateSnapshot of the name a transition asks for that someone
// else created first (a chosen path, COMPLETED) fails the transition: the
// new colour is never started from it, the old one keeps running.
func TestAForeignSnapshotOfTheSameNameFailsTheTransition(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	s := w.snapshot()
	s.State, s.Path, s.Foreign = SnapshotCompleted, "file:/chosen/by/someone-else", "it is not owned by orders"
	d := w.step()
	w.expectState(sActiveBlue, jFailing)
	if w.children[Green] != nil {
		w.fatalf("orders-green started from a snapshot bg-gitops did not create")
	}
	if m := eventMessage(d, "SnapshotNotOurs"); !strings.Contains(m, "was not created by bg-gitops for orders") {
		w.fatalf("event %q", m)
	}
	if r := w.newest(); r.Outcome != v1alpha1.RolloutFailed || r.SavepointPath != "" {
		w.fatalf("rollout %+v", r)
	}
}
