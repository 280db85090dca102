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

// Sequences at the edges of FLIP-503 (issue 34): lost status writes,
// suspends and resumes mid-way, recoveries, closing windows. A "lost"
// status write is w.dropNext: the actions land, the status stays as it
// was. The adapter writes status before applying or deleting a child
// (StatusFirst), so in a cluster this is a status restored to an earlier
// one after the write (a backup restore, a tool that writes the status
// back).

// lostStatelessStart: ACTIVE_BLUE (stateless), r2 committed, the decision
// that starts green applies it and loses its status write.
func lostStatelessStart(t *testing.T) *world {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.dropNext = true
	w.step()
	w.expectState(sActiveBlue, jRunning)
	if w.children[Green] == nil {
		w.fatalf("green not started")
	}
	return w
}

// A new colour started by a decision that lost its status write is taken
// up again as the transition's target even after the rollout window
// closed: the transition began inside it, and deleting the new colour,
// ready and running the change, would only start it again later.
func TestLostStatelessStartThenWindowClosesKeepsTheNewColour(t *testing.T) {
	w := lostStatelessStart(t)
	w.ready(Green)
	w.window = Window{Open: false, Description: "outside rollout window"}
	d := w.step()
	if w.deleting(d, "orders-green") {
		w.fatalf("the new colour, ready and running r2, is deleted because the window closed: %s", describeActions(d.Actions))
	}
}

// After the lost write the active job stops being ready: the transition
// is taken up all the same (the new colour needs nothing of the active
// job once started) and cuts over to green, as it would have with the
// write kept, instead of leaving green running unwatched beside blue.
func TestLostStatelessStartThenActiveFailsStillCutsOver(t *testing.T) {
	w := lostStatelessStart(t)
	w.ready(Green)
	w.failChild(Blue)
	for i := 0; i < 60; i++ { // 15 min of reconciles
		w.step()
		w.advance(15 * time.Second)
		w.gone()
	}
	st := w.status()
	g := w.children[Green]
	if st.BlueGreenState == sActiveBlue && g != nil && !g.Deleting && !g.suspendedSpec() {
		w.fatalf("after 15 min: %s/%s with %s running r2 beside the failed active job, untracked (deadline %v, error %q)",
			st.BlueGreenState, st.JobStatus.State, g.Name, st.AbortTimestamp, st.Error)
	}
}

// Control for the previous test: with the status write kept, the same
// failure of blue ends in ACTIVE_GREEN.
func TestStatelessStartThenActiveFailsCutsOver(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.ready(Green)
	w.failChild(Blue)
	for i := 0; i < 8; i++ {
		w.step()
		w.advance(15 * time.Second)
		w.gone()
	}
	w.expectState(sActiveGreen, jRunning)
}

// A lost status write at each step of a stateless transition: whatever
// step loses its write, the world ends with r2 running in exactly one
// colour and no job started twice.
func TestLostWriteAtEachStepOfAStatelessTransitionStartsGreenOnce(t *testing.T) {
	for drop := 0; drop < 6; drop++ {
		w := deployed(t, v1alpha1.UpgradeModeStateless)
		w.config(v1alpha1.DeploymentDeletionDelayKey, "30 s")
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		for i := 0; i < 12; i++ {
			w.dropNext = i == drop
			w.step()
			if i == 1 {
				w.ready(Green)
			}
			w.advance(15 * time.Second)
			w.gone()
		}
		w.expectState(sActiveGreen, jRunning)
		if w.lineage["orders-green"] != 1 {
			w.fatalf("drop at step %d: green's job started %d times", drop, w.lineage["orders-green"])
		}
	}
}

// A job that comes up with its in-place change after the change aborted
// is RUNNING again ("Recovered"), and the revision it runs is recorded
// as live.
func TestRecoveredInPlaceRevisionGoesLive(t *testing.T) {
	w := abortedInPlace(t)
	w.ready(Green)
	d := w.step()
	w.expectState(sActiveGreen, jRunning)
	w.expectEvents(d, "Recovered")
	live := w.status().LiveRevisions
	if len(live) == 0 || live[len(live)-1] != "main@sha1:r3" {
		w.fatalf("green runs r3 (Recovered) but liveRevisions is %v", live)
	}
}

// The recovered job is RUNNING; a second replica acting on the
// status before the recovery (FAILING, in-place aborted) must not
// reintroduce the abort, and Recovered is reported once.
func TestRecoveredIsReportedOnce(t *testing.T) {
	w := abortedInPlace(t)
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	n := 0
	for i := 0; i < 5; i++ {
		w.advance(15 * time.Second)
		d := w.step()
		for _, e := range d.Events {
			if e.Reason == "Recovered" {
				n++
			}
		}
	}
	if n != 0 {
		w.fatalf("Recovered reported %d more times", n)
	}
	// A job that fails again after recovering is not an abort again.
	w.failChild(Green)
	w.step()
	if w.status().JobStatus.State == jFailing && strings.Contains(w.status().Error, "did not complete") {
		w.fatalf("the old abort's error is back: %q", w.status().Error)
	}
}

// After an in-place abort, a retry, then a suspend
// committed during the retried restart: the suspend supersedes the retry
// and ends SUSPENDED; nothing is reported aborted after the suspend.
func TestSuspendDuringARetriedInPlaceRestartEndsSuspended(t *testing.T) {
	w := abortedInPlace(t)
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "r1")
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.advance(time.Minute)
	suspend(w, "main@sha1:r4")
	d := w.step()
	if spec := w.expectApply(d, "orders-green"); !spec.Suspended() {
		w.fatalf("green applied running, want suspended")
	}
	w.suspendDone(Green)
	w.step()
	w.expectState(sActiveGreen, jSuspended)
	h := w.status().History
	if last := h[len(h)-1]; last.Revision != "main@sha1:r4" || last.Outcome != v1alpha1.RolloutSucceeded {
		w.fatalf("the suspend is not r4's succeeded rollout: %+v", h)
	}
}

// The suspend decision loses its status write (the suspended
// spec is applied, status still says the in-place r3 rollout). The next
// reconcile must not re-apply the running r3 spec, and must end
// SUSPENDED without reporting an abort.
func TestSuspendMidRestartWithLostStatusWriteEndsSuspended(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r3")
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.advance(time.Minute)
	suspend(w, "main@sha1:r4")
	w.dropNext = true
	w.step()
	if !w.mustChild(Green).suspendedSpec() {
		w.fatalf("green not suspended")
	}
	for i := 0; i < 3; i++ {
		d := w.step()
		for _, a := range d.Actions {
			if a.Type == ApplyChild && a.Child.Name == "orders-green" && !a.Child.Spec.Suspended() {
				w.fatalf("green re-applied running after the lost write: %s", describeActions(d.Actions))
			}
			if a.Type == DeleteChild {
				w.fatalf("a child deleted: %s", describeActions(d.Actions))
			}
		}
		w.advance(15 * time.Second)
	}
	w.suspendDone(Green)
	w.step()
	w.step()
	w.expectState(sActiveGreen, jSuspended)
	for _, line := range w.history {
		if strings.Contains(line, "Aborted") {
			w.fatalf("an abort was reported: %s", line)
		}
	}
}

// A suspend committed during the in-place restart, and the grace
// period ends before the suspended job stops: the suspend's own rollout
// aborts, never the job deleted, and a resume restarts green (the only
// state) rather than starting from empty.
func TestSuspendMidRestartThatNeverStopsThenResumeKeepsGreen(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r3")
	w.step()
	w.advance(time.Minute)
	suspend(w, "main@sha1:r4")
	w.step()
	for i := 0; i < 50; i++ {
		d := w.step()
		for _, a := range d.Actions {
			if a.Type == DeleteChild {
				w.fatalf("a child deleted: %s", describeActions(d.Actions))
			}
		}
		w.advance(15 * time.Second)
	}
	resume(w, "main@sha1:r5")
	for i := 0; i < 4; i++ {
		d := w.step()
		for _, a := range d.Actions {
			if a.Type == DeleteChild {
				w.fatalf("a child deleted on resume: %s", describeActions(d.Actions))
			}
			if a.Type == ApplyChild && a.Child.Name == "orders-blue" && a.Child.Spec.Job.InitialSavepointPath == "" {
				w.fatalf("blue started from empty state: %s", describeActions(d.Actions))
			}
		}
		w.advance(15 * time.Second)
		w.gone()
	}
}

// The "started new colour" of a savepoint redeploy: a leftover
// of the other colour that carries the pending revision and the spec,
// but was started from another savepoint than the template's, is not
// taken up (it is deleted and started again from the template's path).
func TestStartedNewColourFromAnotherSavepointIsNotTakenUp(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.InitialSavepointPath = "/sp/chosen"
		s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
	}, "main@sha1:r2")
	w.dropNext = true
	w.step()
	g := w.mustChild(Green)
	if g.Spec.Job.InitialSavepointPath != "/sp/chosen" {
		w.fatalf("green not started from the chosen savepoint: %q", g.Spec.Job.InitialSavepointPath)
	}
	// The same revision, edited by hand to another path.
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/sp/other"
	w.parent.Generation++
	w.ready(Green)
	var started bool
	for i := 0; i < 6; i++ {
		w.step()
		w.gone()
		if c := w.children[Green]; c != nil && c.Spec.Job.InitialSavepointPath == "/sp/other" {
			started = true
		}
		w.advance(15 * time.Second)
	}
	if !started {
		w.fatalf("green kept the savepoint /sp/chosen after the path changed to /sp/other: %v", w.childNames())
	}
}

// Sweeps: in a savepoint or stateless transition, a lost status write at
// step drop, the window closing at step shut (reopening 3 steps later),
// and a retry requested at step retry. The world's checks (checkDecision,
// checkWorld) run on every decision; at the end r2 runs in green alone,
// and a stateful green was started from a savepoint.
func TestLostWriteWindowAndRetryAtEveryStepEndInGreen(t *testing.T) {
	for _, mode := range []string{v1alpha1.UpgradeModeStateless, v1alpha1.UpgradeModeSavepoint} {
		for drop := -1; drop < 7; drop++ {
			for shut := -1; shut < 7; shut++ {
				for retry := -1; retry < 7; retry += 3 {
					w := deployed(t, mode)
					newImage(w, "flink:1.20.1", "main@sha1:r2")
					for i := 0; i < 30; i++ {
						w.dropNext = i == drop
						if i == shut {
							w.window = Window{Open: false, Description: "closed"}
						}
						if i == shut+3 {
							w.window = Window{Open: true}
						}
						if i == retry {
							w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x")
						}
						w.step()
						if sp := w.status().Savepoint; sp != nil && w.snaps[sp.Name] != nil && w.snaps[sp.Name].State == SnapshotTriggerPending {
							w.completeSnapshot()
						}
						if g := w.children[Green]; g != nil && !g.Deleting && !g.suspendedSpec() && g.JobState != JobRunning {
							w.ready(Green)
						}
						w.advance(15 * time.Second)
						w.gone()
					}
					st := w.status()
					if st.BlueGreenState != sActiveGreen || st.JobStatus.State != jRunning || w.children[Blue] != nil {
						w.fatalf("%s drop=%d shut=%d retry=%d: ends %s/%s with %v", mode, drop, shut, retry, st.BlueGreenState, st.JobStatus.State, w.childNames())
					}
					if g := w.children[Green]; mode == v1alpha1.UpgradeModeSavepoint && g.Spec.Job.InitialSavepointPath == "" {
						w.fatalf("%s drop=%d shut=%d retry=%d: stateful green started from empty state", mode, drop, shut, retry)
					}
				}
			}
		}
	}
}

// Sweep over an in-place change of a stateful active job (r3), with a
// suspend (r4) committed at step sus, a resume (r5, r3's spec) at step
// res, a lost status write at step drop, a retry at step retry, and the
// job coming up at step up (or never). The world's checks run on every
// decision; at the end green is the only child, never deleted, and
// runs or is suspended as the spec says.
func TestInPlaceSuspendResumeRetryAtEveryStepKeepInvariants(t *testing.T) {
	for sus := -1; sus < 5; sus++ {
		for res := -1; res < 8; res += 2 {
			if res >= 0 && (sus < 0 || res <= sus) {
				continue
			}
			for drop := -1; drop < 6; drop++ {
				if drop == sus && res >= 0 {
					continue // TestLostSuspendWriteThenRevertResumesTheJob
				}
				if testing.Short() && drop != -1 && drop != sus && drop != sus+1 {
					continue
				}
				for _, up := range []int{-1, 1, 4} {
					for _, retry := range []int{-1, 3, 45} {
						w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
						parallelismDefault(w, "4", "main@sha1:r3")
						for i := 0; i < 70; i++ {
							w.dropNext = i == drop
							if i == sus {
								suspend(w, "main@sha1:r4")
							}
							if i == res {
								resume(w, "main@sha1:r5")
							}
							if i == retry {
								w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x")
							}
							d := w.step()
							for _, a := range d.Actions {
								if a.Type == DeleteChild && a.ChildName == "orders-green" {
									w.fatalf("sus=%d res=%d drop=%d up=%d retry=%d: the only job deleted", sus, res, drop, up, retry)
								}
							}
							g := w.mustChild(Green)
							switch {
							case g.suspendedSpec() && g.LifecycleState != LifecycleSuspended:
								w.suspendDone(Green)
							case !g.suspendedSpec() && up >= 0 && i >= up && !g.Ready():
								w.ready(Green)
							}
							w.advance(15 * time.Second)
						}
						// Settle with the job doing as told.
						for i := 0; i < 4; i++ {
							if g := w.mustChild(Green); g.suspendedSpec() && g.LifecycleState != LifecycleSuspended {
								w.suspendDone(Green)
							} else if !g.suspendedSpec() && !g.Ready() {
								w.ready(Green)
							}
							w.step()
							w.advance(15 * time.Second)
						}
						st := w.status()
						want := jRunning
						if w.parent.Spec.Template.Spec.Suspended() {
							want = jSuspended
						}
						if st.BlueGreenState != sActiveGreen || st.JobStatus.State != want || w.children[Blue] != nil {
							w.fatalf("sus=%d res=%d drop=%d up=%d retry=%d: ends %s/%s (want %s) with %v, error %q",
								sus, res, drop, up, retry, st.BlueGreenState, st.JobStatus.State, want, w.childNames(), st.Error)
						}
					}
				}
			}
		}
	}
}

// A suspend (r4) applied with its status write lost (status still records
// r3), then r5 reverts it: nothing is pending against the status, but the
// child carries a revision the status never recorded and a job state that
// is not the spec's. The job is resumed: no job stays stopped while the
// spec says running.
func TestLostSuspendWriteThenRevertResumesTheJob(t *testing.T) {
	for _, midRestart := range []bool{false, true} {
		t.Run(map[bool]string{false: "active", true: "mid-restart"}[midRestart], func(t *testing.T) { lostSuspendThenRevert(t, midRestart) })
	}
}

func lostSuspendThenRevert(t *testing.T, midRestart bool) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r3")
	w.step()
	w.expectState(sToGreen, jReconciling)
	if !midRestart {
		w.ready(Green)
		w.step()
		w.expectState(sActiveGreen, jRunning)
	}
	w.advance(time.Minute)
	suspend(w, "main@sha1:r4")
	w.dropNext = true
	w.step()
	if !w.mustChild(Green).suspendedSpec() {
		w.fatalf("green not suspended by r4")
	}
	resume(w, "main@sha1:r5")
	for i := 0; i < 60; i++ {
		w.follow(Green)
		w.step()
		w.advance(15 * time.Second)
	}
	if g := w.mustChild(Green); g.suspendedSpec() {
		w.fatalf("midRestart=%v: spec says running (r5), green stays suspended; status %s/%s, error %q",
			midRestart, w.status().BlueGreenState, w.status().JobStatus.State, w.status().Error)
	}
}

// The mirror image: a resume (r5) applied with its status write lost,
// then r6 suspends again (r6's spec is r4's, which status still records):
// the job is suspended as the spec says.
func TestLostResumeWriteThenRevertSuspendsTheJob(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, "main@sha1:r4")
	w.step()
	w.suspendDone(Green)
	w.step()
	w.expectState(sActiveGreen, jSuspended)
	resume(w, "main@sha1:r5")
	w.dropNext = true
	w.step()
	if w.mustChild(Green).suspendedSpec() {
		w.fatalf("green not resumed by r5")
	}
	suspend(w, "main@sha1:r6")
	for i := 0; i < 20; i++ {
		w.follow(Green)
		w.step()
		w.advance(15 * time.Second)
	}
	if g := w.mustChild(Green); !g.suspendedSpec() {
		w.fatalf("spec says suspended (r6), green keeps running r5; status %s/%s", w.status().BlueGreenState, w.status().JobStatus.State)
	}
}

// Edits during the deletion delay (a revert to blue's spec, a
// second change, a suspend), with a lost status write at each step and
// green's readiness lagging a generation. The world's checks run on
// every decision; at the end one colour runs (or holds, suspended) the
// final spec.
func TestEditsDuringTheDeletionDelayEndWithOneColour(t *testing.T) {
	edits := map[string]func(w *world){
		"revert": func(w *world) { newImage(w, "flink:1.20", "main@sha1:r3") },
		"parallel": func(w *world) {
			w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Job.Parallelism = ptr(int32(4)) }, "main@sha1:r3")
		},
		"suspend": func(w *world) { suspend(w, "main@sha1:r3") },
	}
	for _, mode := range []string{v1alpha1.UpgradeModeStateless, v1alpha1.UpgradeModeSavepoint} {
		for name, edit := range edits {
			for at := 0; at < 5; at++ {
				for drop := -1; drop < 8; drop++ {
					w := deployed(t, mode)
					w.config(v1alpha1.DeploymentDeletionDelayKey, "1 min")
					startTransition(w, mode)
					w.ready(Green)
					for i := 0; i < 40; i++ {
						if i == at {
							edit(w)
						}
						w.dropNext = i == drop
						w.step()
						if sp := w.status().Savepoint; sp != nil && w.snaps[sp.Name] != nil && w.snaps[sp.Name].State == SnapshotTriggerPending {
							w.completeSnapshot()
						}
						for _, c := range []Color{Blue, Green} {
							ch := w.children[c]
							if ch == nil || ch.Deleting {
								continue
							}
							if ch.suspendedSpec() && ch.LifecycleState != LifecycleSuspended {
								w.suspendDone(c)
							} else if !ch.suspendedSpec() && !ch.Ready() {
								if i == at {
									reportsPreviousGeneration(ch)
								} else {
									ch.ObservedGeneration = ch.Generation
									w.ready(c)
								}
							}
						}
						w.advance(15 * time.Second)
						w.gone()
					}
					st := w.status()
					live := w.liveChildren()
					want := 1
					if name == "suspend" {
						want = 0
					}
					if len(live) != want || (st.BlueGreenState != sActiveBlue && st.BlueGreenState != sActiveGreen) {
						w.fatalf("%s %s at=%d drop=%d: ends %s/%s with %v running (children %v)", mode, name, at, drop,
							st.BlueGreenState, st.JobStatus.State, live, w.childNames())
					}
				}
			}
		}
	}
}

// After the lost write of a stateless start, a commit arrives at
// step at (a suspend, another image, a revert to blue's spec, a retry),
// with green ready at step up and blue deleted by hand at step kill. The
// world's checks run on every decision; at the end at most one colour
// runs, it runs the final spec, and nothing is left FAILING without an
// error that says why.
func TestEventsAfterALostStatelessStartEndWithOneColour(t *testing.T) {
	events := map[string]func(w *world){
		"suspend": func(w *world) { suspend(w, "main@sha1:r3") },
		"image":   func(w *world) { newImage(w, "flink:1.20.2", "main@sha1:r3") },
		"revert":  func(w *world) { newImage(w, "flink:1.20", "main@sha1:r3") },
		"retry":   func(w *world) { w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x") },
		"none":    func(w *world) {},
	}
	for name, ev := range events {
		for at := 0; at < 4; at++ {
			for _, up := range []int{-1, 0, 2} {
				for _, kill := range []int{-1, 1} {
					w := lostStatelessStart(t)
					for i := 0; i < 70; i++ {
						if i == at {
							ev(w)
						}
						if i == kill {
							if b := w.children[Blue]; b != nil && !b.Deleting {
								w.deleteByHand(Blue)
							}
						}
						w.step()
						for _, c := range []Color{Blue, Green} {
							ch := w.children[c]
							if ch == nil || ch.Deleting {
								continue
							}
							if ch.suspendedSpec() && ch.LifecycleState != LifecycleSuspended {
								w.suspendDone(c)
							} else if !ch.suspendedSpec() && !ch.Ready() && (c == Blue || (up >= 0 && i >= up)) {
								w.ready(c)
							}
						}
						w.advance(15 * time.Second)
						w.gone()
					}
					st := w.status()
					live := w.liveChildren()
					if len(live) > 1 {
						w.fatalf("%s at=%d up=%d kill=%d: %v run at the end, status %s/%s, error %q", name, at, up, kill, live,
							st.BlueGreenState, st.JobStatus.State, st.Error)
					}
					if kill < 0 && up >= 0 && name != "suspend" && len(live) != 1 {
						w.fatalf("%s at=%d up=%d: nothing runs at the end, status %s/%s", name, at, up, st.BlueGreenState, st.JobStatus.State)
					}
				}
			}
		}
	}
}

// After the lost write of a stateless start, the active colour is
// deleted by hand: green, ready and running the pending change from
// spec.template, becomes the active deployment, RUNNING, instead of a
// status that says the job is gone and asks for a retry.
func TestLostStatelessStartThenActiveDeletedTakesOverTheNewColour(t *testing.T) {
	w := lostStatelessStart(t)
	w.ready(Green)
	w.deleteByHand(Blue)
	w.gone()
	for i := 0; i < 8; i++ {
		w.step()
		w.advance(15 * time.Second)
	}
	st := w.status()
	if st.BlueGreenState != sActiveGreen || st.JobStatus.State != jRunning {
		w.fatalf("green runs r2, ready, yet status is %s/%s: %q", st.BlueGreenState, st.JobStatus.State, st.Error)
	}
}

// A suspend committed during an in-place restart supersedes the
// restart's rollout: it is recorded Superseded, never Aborted, so the
// last-abort gauge and the BgGitopsRolloutAborted alert stay quiet.
func TestSuspendMidRestartRecordsNoAbort(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r3")
	w.step()
	w.advance(time.Minute)
	suspend(w, "main@sha1:r4")
	w.step()
	w.suspendDone(Green)
	w.step()
	w.expectState(sActiveGreen, jSuspended)
	for _, e := range w.status().History {
		if e.Outcome == v1alpha1.RolloutAborted && e.FinishedAt != nil {
			w.fatalf("history holds an Aborted rollout (%s, %q): the last-abort gauge is set and BgGitopsRolloutAborted fires", e.Revision, e.Reason)
		}
	}
}

// The status is restored to what it was before r2 (ACTIVE_BLUE) after a
// stateful transition cut over to green and blue is gone. Green runs r2
// from blue's savepoint and holds the only state: it becomes the active
// deployment; a retry never deletes it nor starts blue from empty state
// beside it.
func TestRestoredStatusAfterAStatefulCutOverNeverLosesGreen(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	before := *w.status().DeepCopy()
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.gone()
	w.expectState(sActiveGreen, jRunning)
	w.parent.Status = *before.DeepCopy()
	w.step()
	if st := w.status(); strings.Contains(st.Error, "state are gone") {
		t.Errorf("green runs r2 with the only state, yet: %s/%s %q", st.BlueGreenState, st.JobStatus.State, st.Error)
	}
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x")
	for i := 0; i < 20; i++ {
		d := w.step()
		for _, a := range d.Actions {
			if a.Type == DeleteChild && a.ChildName == "orders-green" {
				w.fatalf("green, holding the only state, deleted: %s", describeActions(d.Actions))
			}
			if a.Type == ApplyChild && a.Child.Name == "orders-blue" && a.Child.Spec.Job.InitialSavepointPath == "" && !a.Child.Spec.Suspended() {
				t.Errorf("blue, stateful, started from empty state beside green: %s", describeActions(d.Actions))
			}
		}
		if b := w.children[Blue]; b != nil && !b.Deleting && !b.suspendedSpec() && !b.Ready() {
			w.ready(Blue)
		}
		w.advance(15 * time.Second)
		w.gone()
	}
	if t.Failed() {
		t.Logf("then: %s\n  children %v", strings.Join(w.history[len(w.history)-20:], "\n  "), w.childNames())
	}
}

// After the lost write of a stateless start, a commit that changes
// nothing in the spec (r3: a README edit) lands before the next
// reconcile: green runs exactly the spec from spec.template and is taken
// up, whatever revision it carries.
func TestLostStatelessStartThenANoOpCommitKeepsTheNewColour(t *testing.T) {
	w := lostStatelessStart(t)
	w.ready(Green)
	w.annotate(v1alpha1.RevisionAnnotation, "main@sha1:r3")
	d := w.step()
	if w.deleting(d, "orders-green") {
		w.fatalf("green, running r3's spec, deleted: %s", describeActions(d.Actions))
	}
}

// follow plays the Flink operator for colour c: a suspended spec stops
// the job, a running one comes up.
func (w *world) follow(c Color) {
	ch := w.children[c]
	if ch == nil || ch.Deleting {
		return
	}
	if ch.suspendedSpec() && ch.LifecycleState != LifecycleSuspended {
		w.suspendDone(c)
	} else if !ch.suspendedSpec() && !ch.Ready() {
		w.ready(c)
	}
}

// liveChildren names the children whose spec runs a job: neither
// suspended nor being deleted.
func (w *world) liveChildren() []string {
	var live []string
	for _, c := range []Color{Blue, Green} {
		if ch := w.children[c]; ch != nil && !ch.suspendedSpec() && !ch.Deleting {
			live = append(live, ch.Name)
		}
	}
	return live
}
