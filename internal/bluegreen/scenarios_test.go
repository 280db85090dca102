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

// The scenarios of the Flink operator's FlinkBlueGreenDeploymentControllerTest
// (reference §4), by behaviour.

const (
	sActiveBlue  = v1alpha1.ActiveBlue
	sActiveGreen = v1alpha1.ActiveGreen
	sToBlue      = v1alpha1.TransitioningToBlue
	sToGreen     = v1alpha1.TransitioningToGreen
	sSpBlue      = v1alpha1.SavepointingBlue
	sInit        = v1alpha1.InitializingBlue
	jRunning     = v1alpha1.JobRunning
	jReconciling = v1alpha1.JobReconciling
	jFailing     = v1alpha1.JobFailing
	jSuspended   = v1alpha1.JobSuspended
)

var modes = []string{v1alpha1.UpgradeModeSavepoint, v1alpha1.UpgradeModeLastState, v1alpha1.UpgradeModeStateless}

// deployed returns a world with blue active and running.
func deployed(t *testing.T, mode string) *world {
	w := newWorld(t, mode)
	w.step()
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	return w
}

func newImage(w *world, image, rev string) {
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Image = image }, rev)
}

// startTransition pushes a new image and drives the world to
// TRANSITIONING_TO_GREEN, returning the savepoint path green starts from.
func startTransition(w *world, mode string) string {
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	if mode == v1alpha1.UpgradeModeStateless {
		w.expectState(sToGreen, jReconciling)
		return ""
	}
	w.expectState(sSpBlue, jReconciling)
	if len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot || d.Actions[0].Snapshot.JobName != "orders-blue" {
		w.fatalf("want a savepoint of orders-blue, got %s", describeActions(d.Actions))
	}
	path := w.completeSnapshot()
	w.step()
	w.expectState(sToGreen, jReconciling)
	return path
}

func TestBasicDeployment(t *testing.T) {
	for _, path := range []string{"", "/user/sp-0"} {
		t.Run("path="+path, func(t *testing.T) {
			w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
			w.parent.Spec.Template.Spec.Job.InitialSavepointPath = path
			d := w.step()
			w.expectState(sToBlue, jReconciling)
			w.expectChildren(Blue)
			if got := w.children[Blue].Spec.Job.InitialSavepointPath; got != path {
				w.fatalf("blue initialSavepointPath = %q, want %q", got, path)
			}
			if d.RequeueAfter != 15*time.Second || w.status().AbortTimestamp == nil || w.status().TransitionStartTime == nil {
				w.fatalf("want requeue 15s and an abort deadline, got %s %v", d.RequeueAfter, w.status().AbortTimestamp)
			}
			w.ready(Blue)
			w.step()
			w.expectState(sActiveBlue, jRunning)
			st := w.status()
			if st.AbortTimestamp != nil || st.DeploymentReadyTimestamp != nil || st.ActiveRevision != "main@sha1:r1" {
				w.fatalf("markers not reset or revision wrong: %+v", st)
			}
			w.expectNoop(w.step())
		})
	}
}

func TestBasicTransition(t *testing.T) {
	for _, mode := range modes {
		for _, tpl := range []string{"", "/user/sp-0"} {
			t.Run(mode+"/path="+tpl, func(t *testing.T) {
				w := newWorld(t, mode)
				w.parent.Spec.Template.Spec.Job.InitialSavepointPath = tpl
				w.config(v1alpha1.DeploymentDeletionDelayKey, "500 ms")
				w.step()
				w.ready(Blue)
				w.step()
				if mode != v1alpha1.UpgradeModeStateless {
					newImage(w, "flink:1.20.1", "main@sha1:r2")
					w.step()
					w.expectState(sSpBlue, jReconciling)
					d := w.step() // savepoint pending
					if len(d.Events) != 0 || d.RequeueAfter == 0 {
						w.fatalf("pending savepoint: want quiet requeue, got %+v", d)
					}
					sp := w.completeSnapshot()
					w.step()
					if got := w.children[Green].Spec.Job.InitialSavepointPath; got != sp {
						w.fatalf("green starts from %q, want %q", got, sp)
					}
				} else {
					newImage(w, "flink:1.20.1", "main@sha1:r2")
					w.step()
					if got := w.children[Green].Spec.Job.InitialSavepointPath; got != tpl {
						w.fatalf("green starts from %q, want template %q", got, tpl)
					}
				}
				w.expectState(sToGreen, jReconciling)
				w.expectChildren(Blue, Green)
				w.ready(Green)
				d := w.step()
				if d.RequeueAfter != 500*time.Millisecond || w.status().DeploymentReadyTimestamp == nil || len(d.Actions) != 0 {
					w.fatalf("ready: want readyTs and requeue 500ms, got %s", d.RequeueAfter)
				}
				w.advance(200 * time.Millisecond)
				d = w.step()
				if len(d.Actions) != 0 || d.RequeueAfter != 300*time.Millisecond {
					w.fatalf("before the delay: want no action and 300ms, got %s %s", describeActions(d.Actions), d.RequeueAfter)
				}
				w.advance(300 * time.Millisecond)
				d = w.step()
				if len(d.Actions) != 1 || d.Actions[0].Type != DeleteChild || d.Actions[0].ChildName != "orders-blue" {
					w.fatalf("want blue deleted, got %s", describeActions(d.Actions))
				}
				w.expectState(sActiveGreen, jRunning)
				w.gone()
				w.expectChildren(Green)
				w.expectNoop(w.step())
				if w.status().ActiveRevision != "main@sha1:r2" || w.status().TargetRevision != "main@sha1:r2" {
					w.fatalf("revisions: %+v", w.status())
				}
			})
		}
	}
}

func TestSavepointRedeployUsesUserPath(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
		s.Template.Spec.Job.InitialSavepointPath = "/user/sp-9"
	}, "main@sha1:r2")
	d := w.step()
	for _, a := range d.Actions {
		if a.Type == CreateSnapshot {
			w.fatalf("savepoint redeploy took a savepoint")
		}
	}
	w.expectState(sToGreen, jReconciling)
	if got := w.children[Green].Spec.Job.InitialSavepointPath; got != "/user/sp-9" {
		w.fatalf("green starts from %q", got)
	}
}

func suspend(w *world, rev string) {
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Job.State = v1alpha1.JobStateSuspended }, rev)
}

func resume(w *world, rev string) {
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Job.State = v1alpha1.JobStateRunning }, rev)
}

func TestSuspendAndResumeInPlace(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.State = v1alpha1.JobStateSuspended
		s.Template.Spec.Job.Parallelism = ptr(int32(4))
	}, "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectChildren(Blue)
	if !w.children[Blue].suspendedSpec() || *w.children[Blue].Spec.Job.Parallelism != 4 {
		w.fatalf("blue not patched: %+v", w.children[Blue].Spec.Job)
	}
	w.suspendDone(Blue)
	w.step()
	w.expectState(sActiveBlue, jSuspended)
	resume(w, "main@sha1:r3")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectChildren(Blue)
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectChildren(Blue)
}

func TestSuspendDuringTransitionWaitsForCutOver(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	startTransition(w, v1alpha1.UpgradeModeStateless)
	suspend(w, "main@sha1:r3")
	d := w.step()
	if len(d.Actions) != 0 || w.children[Green].suspendedSpec() {
		w.fatalf("suspend applied during the transition: %s", describeActions(d.Actions))
	}
	w.ready(Green)
	w.step()
	w.expectState(sToGreen, jReconciling) // cut over, now suspending green in place
	if w.children[Blue] == nil || !w.children[Blue].Deleting || !w.children[Green].suspendedSpec() {
		w.fatalf("want blue deleted and green suspending: %v", w.childNames())
	}
	w.gone()
	w.suspendDone(Green)
	w.step()
	w.expectState(sActiveGreen, jSuspended)
}

func TestFailureBeforeTransition(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Blue)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	w.expectState(sActiveBlue, jFailing)
	if len(d.Actions) != 0 || !strings.Contains(w.status().Error, "not ready") {
		w.fatalf("want FAILING without actions, got %s %q", describeActions(d.Actions), w.status().Error)
	}
	w.expectNoop(w.step())
	// Unlike FLIP-503 the change is kept: it starts once blue recovers.
	w.ready(Blue)
	w.step()
	w.expectState(sSpBlue, jReconciling)
}

func TestFailureDuringTransitionAborts(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			w := deployed(t, mode)
			w.config(v1alpha1.AbortGracePeriodKey, "1200 ms")
			w.config(v1alpha1.RescheduleIntervalKey, "3000 ms")
			startTransition(w, mode)
			w.failChild(Green)
			d := w.step()
			if d.RequeueAfter > 3*time.Second || !w.status().AbortTimestamp.After(w.now) {
				w.fatalf("want requeue ≤ interval before the deadline, got %s", d.RequeueAfter)
			}
			w.advance(15 * time.Minute)
			w.step()
			w.expectState(sActiveBlue, jFailing)
			w.expectChildren(Blue, Green)
			if !w.children[Green].suspendedSpec() || !w.children[Blue].Ready() || w.status().AbortTimestamp != nil {
				w.fatalf("after abort: %v %+v", w.childNames(), w.status())
			}
			if c := w.condition(v1alpha1.StalledCondition); c == nil || c.Status != "True" {
				w.fatalf("want Stalled after abort")
			}
			// A new change succeeds, after the suspended leftover is deleted.
			newImage(w, "flink:1.20.2", "main@sha1:r3")
			w.step()
			w.expectChildren(Blue, Green)
			if !w.children[Green].Deleting {
				w.fatalf("the leftover green must be deleted before the new transition")
			}
			// The new revision has not failed: the abort of r2 is not its outcome.
			w.expectState(sActiveBlue, jReconciling)
			if w.status().Error != "" || w.status().TargetRevision != "main@sha1:r3" {
				w.fatalf("while the leftover is deleted: error %q target %q", w.status().Error, w.status().TargetRevision)
			}
			w.gone()
			w.step()
			if mode != v1alpha1.UpgradeModeStateless {
				w.completeSnapshot()
				w.step()
			}
			w.expectState(sToGreen, jReconciling)
			if w.children[Green].suspendedSpec() || w.children[Green].Spec.Image != "flink:1.20.2" {
				w.fatalf("green not replaced: %+v", w.children[Green].Spec)
			}
			w.ready(Green)
			w.step()
			w.expectState(sActiveGreen, jRunning)
		})
	}
}

func TestGreenNotAbortedAfterBlueDeleted(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	w.failChild(Green)
	w.advance(time.Hour)
	w.step()
	// No roll back after the cut-over, and no RUNNING either: the status
	// says the active job is being brought back.
	w.expectState(sActiveGreen, jReconciling)
	if c := w.condition(v1alpha1.ReadyCondition); c.Status != "False" || c.Reason != ReasonJobNotReady {
		w.fatalf("Ready should report the failed job: %+v", c)
	}
	if w.children[Green].suspendedSpec() {
		w.fatalf("green suspended after cut-over")
	}
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
}

func TestAbortResetsReadyTimestamp(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "5 s")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	first := w.status().Savepoint.Name
	w.ready(Green)
	w.step()
	w.failChild(Green) // flaps: fresh grace period, ready timestamp dropped
	w.step()
	if w.status().DeploymentReadyTimestamp != nil {
		w.fatalf("ready timestamp kept after green stopped being ready")
	}
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	if w.status().DeploymentReadyTimestamp != nil || w.status().AbortTimestamp != nil {
		w.fatalf("markers not reset on abort")
	}
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	w.gone() // the suspended leftover green is deleted first
	w.step()
	if w.status().Savepoint.Name == first {
		w.fatalf("savepoint name reused after abort")
	}
	w.completeSnapshot()
	w.step()
	w.ready(Green)
	d := w.step()
	if len(d.Actions) != 0 || d.RequeueAfter != 5*time.Second {
		w.fatalf("full deletion delay not re-armed: %s %s", describeActions(d.Actions), d.RequeueAfter)
	}
}

// A commit during a stateful transition restarts the new colour from a
// fresh savepoint of the old colour, which still runs and holds the
// state: green is deleted, blue savepointed again, and green deployed
// from the new savepoint once it is gone, its timers counted from then.
func TestSpecChangeDuringTransitionRestartsFromAFreshSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	first := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(3 * time.Minute)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	d := w.step()
	w.expectState(sSpBlue, jReconciling)
	if len(d.Actions) != 2 || d.Actions[0].Type != DeleteChild || d.Actions[0].ChildName != "orders-green" ||
		d.Actions[1].Type != CreateSnapshot || d.Actions[1].Snapshot.JobName != "orders-blue" {
		w.fatalf("want green deleted and a fresh savepoint of blue, got %s", describeActions(d.Actions))
	}
	if w.status().LastReconciledSpec != w.specJSON() || w.status().TargetRevision != "main@sha1:r3" {
		w.fatalf("lastReconciledSpec/targetRevision not updated")
	}
	fresh := w.completeSnapshot()
	if fresh == first {
		w.fatalf("the savepoint was not taken again")
	}
	w.step()
	w.expectState(sSpBlue, jReconciling) // green is still being deleted
	w.gone()
	w.step()
	w.expectState(sToGreen, jReconciling)
	if w.children[Green] == nil || w.children[Green].Spec.Image != "flink:1.20.2" || w.children[Green].Spec.Job.InitialSavepointPath != fresh {
		w.fatalf("green not deployed again from the fresh savepoint: %v", w.childNames())
	}
	if got := w.status().AbortTimestamp; got == nil || !got.Time.After(w.now.Add(9*time.Minute)) {
		w.fatalf("the abort deadline %v does not count from the restart", got)
	}
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	if w.status().ActiveRevision != "main@sha1:r3" {
		w.fatalf("activeRevision %q", w.status().ActiveRevision)
	}
	h := w.status().History
	if prev := h[len(h)-2]; prev.Revision != "main@sha1:r2" || prev.Outcome != v1alpha1.RolloutSuperseded || !strings.Contains(prev.Reason, "superseded by main@sha1:r3") {
		w.fatalf("the superseded rollout is recorded as %+v", prev)
	}
}

func TestFailureBeforeFirstDeployment(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.step()
	w.failChild(Blue)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sInit, jFailing)
	w.expectChildren(Blue)
	if !w.children[Blue].suspendedSpec() {
		w.fatalf("blue not suspended")
	}
	w.advance(time.Hour)
	w.expectNoop(w.step())
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	if w.children[Blue].suspendedSpec() {
		w.fatalf("blue still suspended")
	}
}

func TestPatchScenario(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp","parallelism.default":"4"}`)
	}, "main@sha1:r2")
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	if len(d.Actions) != 1 || d.Actions[0].Child.Name != "orders-blue" {
		w.fatalf("want blue patched, got %s", describeActions(d.Actions))
	}
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectChildren(Blue)

	before := w.children[Blue].Spec.DeepCopy()
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Configuration["custom"] = "1" }, "main@sha1:r3")
	w.expectNoop(w.step())
	if !equalSpec(before, &w.children[Blue].Spec) {
		w.fatalf("child touched by a top-level change")
	}

	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Configuration["custom"] = "2"
		s.Template.Spec.Job.AllowNonRestoredState = ptr(true)
	}, "main@sha1:r4")
	w.step()
	w.expectState(sToBlue, jReconciling)
	if !strings.Contains(w.status().LastReconciledSpec, `"custom":"2"`) {
		w.fatalf("stamp misses the top-level change")
	}
}

func equalSpec(a, b *v1alpha1.FlinkDeploymentSpec) bool {
	return len(changedPaths(flattenTemplate(a), flattenTemplate(b))) == 0
}

func TestSavepointFailures(t *testing.T) {
	for _, tc := range []struct{ state, msg, want string }{
		{SnapshotFailed, "checkpoint coordinator down", "checkpoint coordinator down"},
		{SnapshotAbandoned, "job gone", "abandoned"},
		{SnapshotCompleted, "", "without a path"},
	} {
		t.Run(tc.state, func(t *testing.T) {
			w := deployed(t, v1alpha1.UpgradeModeSavepoint)
			newImage(w, "flink:1.20.1", "main@sha1:r2")
			w.step()
			w.failSnapshot(tc.state, tc.msg)
			w.step()
			w.expectState(sActiveBlue, jFailing)
			w.expectChildren(Blue)
			if !strings.Contains(w.status().Error, tc.want) || !w.children[Blue].Ready() {
				w.fatalf("error %q lacks %q", w.status().Error, tc.want)
			}
			w.advance(time.Hour)
			w.expectNoop(w.step())
			newImage(w, "flink:1.20.2", "main@sha1:r3")
			w.step()
			w.expectState(sSpBlue, jReconciling)
			w.completeSnapshot()
			w.step()
			w.expectState(sToGreen, jReconciling)
		})
	}
}

func TestSuspendWhenChildNotReady(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Blue)
	suspend(w, "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.suspendDone(Blue)
	w.step()
	w.expectState(sActiveBlue, jSuspended)
}

func TestInitialSuspendedDeploysOnRunning(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	w.step()
	w.expectState(sInit, jSuspended)
	w.expectChildren()
	w.expectNoop(w.step())
	resume(w, "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectChildren(Blue)
}
