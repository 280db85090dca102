/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// transition.go: the TRANSITIONING_TO_<colour> state — waiting for the target
// until the abort deadline, spec changes mid-way, promotion, cut-over
// (finalize) and abort.

package bluegreen

import (
	"fmt"
	"slices"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// transitionKind tells what TRANSITIONING_TO_T is doing, derived from
// status.activeDeployment.
type transitionKind int

const (
	kindFirst     transitionKind = iota // nothing active: first deployment or redeploy
	kindInPlace                         // T is the active child, patched in place
	kindBlueGreen                       // the other colour is active and keeps running
)

func (d *decider) kindOf(t Color) transitionKind {
	switch d.st.ActiveDeployment {
	case "":
		return kindFirst
	case d.childName(t):
		return kindInPlace
	}
	return kindBlueGreen
}

// transitioning handles TRANSITIONING_TO_T.
func (d *decider) transitioning(t Color) {
	tc, oc := d.child(t), d.child(t.Other())
	kind := d.kindOf(t)
	if kind == kindBlueGreen && (oc == nil || oc.Deleting) {
		// Past the cut-over point (or the old colour was deleted by
		// hand): there is nothing to roll back to, so finalise forward.
		d.st.ActiveDeployment = d.childName(t)
		kind = kindInPlace
		d.event(false, "CutOver", "%s is gone; %s is now the active deployment", d.childName(t.Other()), d.childName(t))
	}
	d.ignoreRetry()
	if d.abortRequested() {
		d.ackAbort()
		d.abort(kind, t, "abort requested")
		return
	}
	if d.changedDuringTransition(kind, t, tc, oc) || d.targetBehind(kind, t, tc, oc) {
		return
	}
	d.monitor(kind, t, tc, oc)
}

func (d *decider) monitor(kind transitionKind, t Color, tc, oc *Child) {
	switch {
	case tc == nil || tc.Deleting:
		d.targetMissing(kind, t, tc)
	case kind == kindInPlace && tc.suspendedSpec():
		if tc.suspended() {
			d.finalizeSuspended(t, tc)
			return
		}
		d.notReady(kind, t, tc)
	case tc.suspendedSpec():
		// Only an abort suspends the new colour: this transition was
		// aborted and its status lost (a crash, a failed status write).
		// Whatever the child reports, the Flink operator is stopping it.
		d.abort(kind, t, tc.Name+" was suspended by an earlier abort")
	case tc.Ready():
		d.targetReady(kind, t, tc, oc)
	default:
		d.notReady(kind, t, tc)
	}
}

// changedDuringTransition re-applies T when the spec changes mid-way
// (FLIP-503). A suspend waits until a blue/green transition is over, and
// stops a job patched in place at once (suspendMidPatch); a change that
// needs a new colour while T is patched in place waits too, and a change
// that makes a transition started without a savepoint stateful.
func (d *decider) changedDuringTransition(kind transitionKind, t Color, tc, oc *Child) bool {
	if !d.specPending() {
		return false
	}
	if Classify(d.last, d.spec).Type == DiffSuspend {
		return kind == kindInPlace && d.suspendMidPatch(t, tc)
	}
	if d.nowKeepsState(kind, oc) {
		// Also when T is gone or going (a lost status write, a deletion
		// by hand): there is no savepoint to re-create it from.
		d.restartWithSavepoint(t, tc, oc)
		return true
	}
	if kind == kindBlueGreen && d.closedToNewColour(oc) {
		// The transition goes on with the spec it started with; the
		// commit waits for the window once it has ended (active).
		return false
	}
	if kind == kindBlueGreen && !d.in.Window.Open && oc != nil && !oc.Deleting {
		// A revert, or what can be patched in place, committed after the
		// window closed: T is not re-specced; the old colour stays.
		d.backToOldColour(t, tc, oc)
		return true
	}
	if tc == nil || tc.Deleting {
		return false
	}
	path, ok := d.reapplyPath(kind, tc, oc)
	if !ok {
		return false
	}
	if d.restartsFromOldColour(kind, path, oc) {
		if d.needsNewColour(oc) {
			d.restartFromNewSavepoint(t, tc, oc)
		} else {
			d.backToOldColour(t, tc, oc)
		}
		return true
	}
	d.respec(kind, t, tc, path)
	return true
}

// respec gives the transition's target T the spec committed during the
// transition: applied to T, or T deleted to start again from the
// savepoint; the deadline starts again.
func (d *decider) respec(kind transitionKind, t Color, tc *Child, path string) {
	diff := Classify(d.last, d.spec)
	how := "re-applying"
	d.supersede(path)
	if d.restartsFromSavepoint(kind, path) {
		// The Flink operator reads initialSavepointPath only when it first
		// deploys a FlinkDeployment: a re-specced T would restart from its
		// own state, which it may never have had. Delete it and deploy it
		// again from the savepoint once it is gone (targetMissing).
		how = "restarting"
		d.deleteChild(t)
	} else {
		d.apply(d.desiredChild(t, path))
	}
	d.stamp()
	d.st.TargetRevision = d.revision()
	d.armDeadline()
	d.st.DeploymentReadyTimestamp = nil
	d.setJob(v1alpha1.JobReconciling, "")
	d.progressing("Progressing", "waiting for %s to become ready", tc.Name)
	d.event(false, "TransitionUpdated", "spec changed during the transition (%s: %v): %s %s with %s",
		diff.Type, diff.Fields, how, tc.Name, revOr(d.revision()))
	d.requeue(d.t.interval)
}

// suspendMidPatch: a suspend committed while the active job T restarts
// with an in-place change stops T now, rather than when the restart
// completes or its grace period ends (which would report the change
// aborted, and leave a job that may never come up running that long).
// The in-place rollout is superseded by the suspend's, a rollout of its
// own that ends SUSPENDED.
func (d *decider) suspendMidPatch(t Color, tc *Child) bool {
	if tc == nil || tc.Deleting {
		return false
	}
	d.end(v1alpha1.RolloutSuperseded, "superseded by "+revOr(d.revision())+": a suspend was committed during the in-place change")
	d.patchInPlace(t, tc, Classify(d.last, d.spec))
	return true
}

// targetBehind completes a decision recorded before its action (see
// StatusFirst) whose action was lost: T carries neither the revision nor
// the spec this transition stamped. It is re-applied, or deleted to be
// deployed again from the savepoint, as changedDuringTransition or
// patchInPlace asked. A T changed by hand (scaled) keeps its revision
// and is left alone.
func (d *decider) targetBehind(kind transitionKind, t Color, tc, oc *Child) bool {
	if tc == nil || tc.Deleting || tc.Revision == d.st.TargetRevision || tc.suspendedSpec() && kind != kindInPlace {
		return false
	}
	path, ok := d.reapplyPath(kind, tc, oc)
	if Classify(d.baseOf(tc), d.spec).Type == DiffIgnore && (!ok || ownPath(tc) == path) {
		// T runs the spec already, from the path it would be given (a
		// commit reverted mid-way): it takes the revision, and is judged
		// on the next reconcile.
		d.apply(&ChildSpec{Name: tc.Name, Color: tc.Color, Spec: *tc.Spec.DeepCopy(), Revision: d.st.TargetRevision})
		d.progressing("Progressing", "waiting for %s to become ready", tc.Name)
		d.requeue(d.t.interval)
		return true
	}
	if d.deadlinePassed() {
		d.abort(kind, t, fmt.Sprintf("%s still runs %s, not %s", tc.Name, revOr(tc.Revision), revOr(d.st.TargetRevision)))
		return true
	}
	if !ok && kind == kindInPlace {
		// The patch never landed, and the spec now needs a new colour.
		d.end(v1alpha1.RolloutSuperseded, "superseded by "+revOr(d.revision())+" before "+tc.Name+" was patched")
		d.resetMarkers()
		d.st.BlueGreenState = activeState(t)
		d.active(t)
		return true
	}
	if !ok {
		return false
	}
	how := "re-applying"
	if d.restartsFromSavepoint(kind, path) {
		how = "deleting, to deploy it again from " + path + ","
		d.deleteChild(t)
	} else {
		cs := d.desiredChild(t, path)
		cs.Revision = d.st.TargetRevision // the revision stamped with this spec
		d.apply(cs)
	}
	d.progressing("Progressing", "waiting for %s to become ready", tc.Name)
	d.event(false, "TransitionResumed", "%s runs %s, not %s: %s it", tc.Name, revOr(tc.Revision), revOr(d.st.TargetRevision), how)
	d.requeue(d.t.interval)
	return true
}

// restartsFromOldColour reports a commit during a stateful blue/green
// transition whose new colour would restart from the savepoint the
// transition took: the old colour, which still holds the state and runs,
// takes a fresh one instead, so that the new colour starts from the state
// as it is now, not as it was when the first commit arrived (a stream of
// commits would keep it ageing).
func (d *decider) restartsFromOldColour(kind transitionKind, path string, oc *Child) bool {
	return kind == kindBlueGreen && d.restartsFromSavepoint(kind, path) && d.st.Savepoint != nil &&
		path == d.st.Savepoint.Path && oc != nil && oc.Ready() && !d.spec.Template.Spec.Suspended() && d.predatesSpec(oc)
}

// predatesSpec reports a savepoint (status.savepoint) the old colour a's
// job did not take for the spec as it is now: its name is a function of
// both (see snapshotName), or of a refresh (freshName).
func (d *decider) predatesSpec(a *Child) bool {
	sp := d.st.Savepoint
	return sp != nil && sp.Name != d.snapshotName(a) && sp.Name != d.freshName(a)
}

// restartFromNewSavepoint supersedes the rollout under way: T is deleted
// and the rollout of the new revision begins again from SAVEPOINTING_X,
// its timers counted from now; T starts from the new savepoint once it is
// gone (savepointDone waits for the name to be free).
func (d *decider) restartFromNewSavepoint(t Color, tc, oc *Child) {
	d.deleteChild(t)
	if _, err := d.snapshotOf(d.snapshotName(oc), oc); err != nil {
		// The rollout under way ends here; the new commit's own is
		// refused at its start (see savepointRefused).
		d.end(v1alpha1.RolloutSuperseded, "superseded by "+revOr(d.revision())+": the spec changed during the rollout")
		d.savepointRefused(t.Other(), err)
		return
	}
	d.restartForNewSpec(t, oc, " is deleted and")
}

// restartForNewSpec ends the rollout under way as superseded and begins
// the rollout of the spec as it is now from a fresh savepoint of oc, the
// old colour (see startSavepoint); how says what became of T.
func (d *decider) restartForNewSpec(t Color, oc *Child, how string) {
	d.ackPromote() // a promotion asked for the rollout superseded is not one of this
	d.end(v1alpha1.RolloutSuperseded, "superseded by "+revOr(d.revision())+": the spec changed during the rollout; "+
		d.childName(t)+" starts again from a fresh savepoint of "+oc.Name)
	d.startSavepoint(t.Other(), oc)
	d.event(false, "TransitionRestarted", "spec changed during the transition: %s%s starts again for %s from a fresh savepoint %s of %s",
		d.childName(t), how, revOr(d.revision()), d.st.Savepoint.Name, oc.Name)
}

// needsNewColour reports a spec that needs a new colour when rolled out
// from oc, the old colour, as it runs: a commit during a transition that
// reverts it, or leaves only what can be patched in place, does not.
func (d *decider) needsNewColour(oc *Child) bool {
	switch rollout, _ := Plan(d.baseOf(oc), d.spec); rollout {
	case RolloutBlueGreenSavepoint, RolloutBlueGreenStateless, RolloutSavepointRedeploy:
		return true
	}
	return false
}

// backToOldColour ends a transition that a commit made unneeded: T is
// deleted, the old colour stays active, and what the spec still changes
// is patched into it in place (see active).
func (d *decider) backToOldColour(t Color, tc, oc *Child) {
	d.endTransitionFor(t, tc, fmt.Sprintf("superseded by %s, which needs no new colour: %s is deleted and %s stays active",
		revOr(d.revision()), d.childName(t), oc.Name))
}

// ownPath is the initialSavepointPath c was applied with.
func ownPath(c *Child) string {
	if c.Spec.Job == nil {
		return ""
	}
	return c.Spec.Job.InitialSavepointPath
}

// nowKeepsState reports a change that makes a blue/green transition
// started without a savepoint (stateless) keep state: the new colour holds
// none of the old colour's, so cutting over would lose it.
func (d *decider) nowKeepsState(kind transitionKind, oc *Child) bool {
	return kind == kindBlueGreen && d.stateful() && (d.st.Savepoint == nil || d.st.Savepoint.Path == "") &&
		oc != nil && Classify(d.baseOf(oc), d.spec).Type != DiffSavepointRedeploy
}

// restartWithSavepoint gives up the stateless transition to T for a spec
// that keeps state: T is deleted, the old colour stays active, and the
// new spec rolls out from its savepoint once T is gone.
func (d *decider) restartWithSavepoint(t Color, tc, oc *Child) {
	msg := fmt.Sprintf("superseded by %s, which keeps state: %s started without a savepoint of %s and is deleted",
		revOr(d.revision()), d.childName(t), oc.Name)
	if rollout, _ := Plan(d.baseOf(oc), d.spec); rollout == RolloutBlueGreenSavepoint {
		msg += "; the change rolls out from a savepoint of " + oc.Name
	}
	d.endTransitionFor(t, tc, msg)
}

// endTransitionFor gives up the transition to T for the spec as it is
// now: T is deleted, the rollout under way ends (msg says why), and the
// old colour, active again, takes the spec as it would from ACTIVE.
func (d *decider) endTransitionFor(t Color, tc *Child, msg string) {
	if tc != nil && !tc.Deleting {
		d.deleteChild(t)
	}
	d.end(v1alpha1.RolloutSuperseded, msg)
	d.resetMarkers()
	d.st.BlueGreenState = activeState(t.Other())
	d.event(false, "TransitionRestarted", "%s", msg)
	d.active(t.Other())
}

// restartsFromSavepoint reports whether T, re-specced during a transition
// that is not in place, must start again from a savepoint path.
func (d *decider) restartsFromSavepoint(kind transitionKind, path string) bool {
	return kind != kindInPlace && path != "" && d.stateful()
}

// reapplyPath is the initialSavepointPath T gets when re-applied: the
// savepoint of the old colour in a stateful blue/green transition, the
// template's for a savepoint redeploy or a stateless or first deployment,
// T's own for an in-place patch.
func (d *decider) reapplyPath(kind transitionKind, tc, oc *Child) (string, bool) {
	switch kind {
	case kindFirst:
		return d.firstPath(), true
	case kindInPlace:
		if dt := Classify(d.baseOf(tc), d.spec).Type; dt == DiffTransition || dt == DiffSavepointRedeploy {
			return "", false
		}
		return d.inPlacePath(tc), true
	}
	if Classify(d.baseOf(oc), d.spec).Type == DiffSavepointRedeploy || !d.stateful() {
		return d.templateSavepointPath(), true
	}
	if d.st.Savepoint == nil || d.st.Savepoint.Path == "" {
		return "", false
	}
	return d.st.Savepoint.Path, true
}

// targetMissing: T vanished (deleted by hand, or not yet in the cache).
func (d *decider) targetMissing(kind transitionKind, t Color, tc *Child) {
	if d.deadlinePassed() {
		d.abort(kind, t, d.childName(t)+" is missing")
		return
	}
	if kind == kindInPlace {
		// The active job itself is gone: nothing to re-create it from.
		d.st.BlueGreenState = activeState(t)
		d.resetMarkers()
		d.active(t)
		return
	}
	if oc := d.child(t.Other()); tc == nil && kind == kindBlueGreen && d.stateful() && oc != nil && !oc.Deleting && !d.needsNewColour(oc) {
		d.backToOldColour(t, tc, oc)
		return
	}
	if tc == nil && kind == kindBlueGreen && !d.redeploysFromTemplate(t) && (d.savepointAged() || d.savepointBeforeSpec(t)) {
		d.restartFromFreshSavepoint(t)
		return
	}
	if tc == nil && kind == kindBlueGreen && !d.redeploysFromTemplate(t) && d.waitsForOldColour(t) {
		d.ensureDeadline()
		d.progressing("Progressing", "waiting for %s to run again: %s starts from a fresh savepoint of it, not from %s, taken before the spec changed",
			d.childName(t.Other()), d.childName(t), d.st.Savepoint.Name)
		d.requeue(min(d.t.interval, d.until(d.st.AbortTimestamp)))
		return
	}
	if oc := d.child(t.Other()); tc == nil && kind == kindBlueGreen && d.closedToNewColour(oc) {
		d.endTransitionFor(t, tc, d.closedMessage())
		return
	}
	if tc == nil {
		path, ok := d.reapplyPath(kind, tc, d.child(t.Other()))
		if !ok {
			d.abort(kind, t, d.childName(t)+" is missing and there is no savepoint to start it from")
			return
		}
		if d.supersedeIfRevised(path) && !d.spec.Template.Spec.Suspended() {
			// T is re-created with the current spec: it is handled, or
			// the next decision would restart T again for it.
			d.stamp()
			d.st.TargetRevision = d.revision()
		}
		d.record(func(r *v1alpha1.RolloutRecord) { r.RestoredFrom = path })
		d.apply(d.desiredChild(t, path))
	}
	d.ensureDeadline()
	d.progressing("Progressing", "waiting for %s to be (re)created", d.childName(t))
	d.requeue(d.until(d.st.AbortTimestamp))
}

// redeploysFromTemplate reports a spec the new colour starts from the
// template's savepoint (SAVEPOINT_REDEPLOY): no savepoint of the old
// colour is taken for it.
func (d *decider) redeploysFromTemplate(t Color) bool {
	oc := d.child(t.Other())
	return oc != nil && Classify(d.baseOf(oc), d.spec).Type == DiffSavepointRedeploy
}

// savepointAged reports a transition whose new colour would start from
// a savepoint taken longer than the savepoint timeout ago (a commit
// restarted it, or a stream of commits did): the source may no longer
// hold the records since.
func (d *decider) savepointAged() bool {
	sp := d.st.Savepoint
	return d.stateful() && sp != nil && sp.Path != "" && sp.TriggerTimestamp != nil &&
		!d.now.Before(sp.TriggerTimestamp.Add(d.t.savepointTimeout))
}

// savepointBeforeSpec reports a savepoint the old colour's job did not
// take for the spec as it is now (its name is a function of both; see
// snapshotName): a commit restarted T while the old colour could not take
// a fresh one (it was not ready).
func (d *decider) savepointBeforeSpec(t Color) bool {
	sp, a := d.st.Savepoint, d.child(t.Other())
	return d.stateful() && sp != nil && sp.Path != "" && a != nil && a.Ready() && d.predatesSpec(a)
}

// waitsForOldColour reports a savepoint taken before the spec changed
// while the old colour, which holds the state, does not run: T waits for
// it to run again (and take a fresh one), within the abort deadline.
func (d *decider) waitsForOldColour(t Color) bool {
	sp, a := d.st.Savepoint, d.child(t.Other())
	return d.stateful() && sp != nil && sp.Path != "" && a != nil && !a.Deleting && !a.Ready() && d.predatesSpec(a)
}

// restartFromFreshSavepoint: T is gone and is to start again, but its
// savepoint has aged or predates the spec. A fresh savepoint of the old colour, which still
// holds the state, is taken (SAVEPOINTING again), and T starts from it,
// its grace period counted from then. An old colour that cannot take one
// (not ready) ends the transition, kept running.
func (d *decider) restartFromFreshSavepoint(t Color) {
	x := t.Other()
	a := d.child(x)
	if a == nil || !a.Ready() || d.spec.Template.Spec.Suspended() || d.st.Savepoint.Name == d.freshName(a) {
		d.abort(kindBlueGreen, t, fmt.Sprintf("savepoint %s is older than %s and %s cannot take a fresh one",
			d.st.Savepoint.Name, d.t.savepointTimeout, d.childName(x)))
		return
	}
	if d.specPending() {
		// A commit landed since the savepoint (its status write was
		// lost): the rollout of that commit starts here.
		d.restartForNewSpec(t, a, "")
		return
	}
	name := d.freshName(a)
	snap, err := d.snapshotOf(name, a)
	if err != nil {
		d.savepointRefused(x, err)
		return
	}
	old := d.st.Savepoint.Name
	d.createSnapshot(snap)
	d.st.BlueGreenState = savepointingState(x)
	d.st.Savepoint = &v1alpha1.SavepointStatus{Name: name, TriggerTimestamp: d.deadline(d.now)}
	d.record(func(r *v1alpha1.RolloutRecord) { r.SavepointName, r.SavepointPath = name, "" })
	d.resetMarkers()
	d.setJob(v1alpha1.JobReconciling, "")
	d.progressing("Savepointing", "taking savepoint %s of %s", name, a.Name)
	d.event(false, "SavepointRefreshed", "%s starts again for %s from a fresh savepoint %s of %s: %s is older than %s",
		d.childName(t), revOr(d.revision()), name, a.Name, old, d.t.savepointTimeout)
	d.requeue(min(d.t.interval, d.t.savepointTimeout, d.t.snapshotPickup))
}

func (d *decider) ensureDeadline() {
	if d.st.AbortTimestamp == nil {
		d.armDeadline()
	}
}

func (d *decider) deadlinePassed() bool {
	return d.st.AbortTimestamp != nil && !d.now.Before(d.st.AbortTimestamp.Time)
}

// notReady waits for T until the abort deadline. A T that was ready and
// stopped being ready gets a fresh deletion delay once ready again, but
// keeps its deadline, so a flapping job cannot hold a transition open; in
// Manual mode, where a person ends the transition, it gets a fresh grace
// period.
func (d *decider) notReady(kind transitionKind, t Color, tc *Child) {
	if d.st.DeploymentReadyTimestamp != nil {
		d.st.DeploymentReadyTimestamp = nil
		if d.p.PromotionMode() == v1alpha1.PromotionManual && kind == kindBlueGreen {
			d.armDeadline()
		}
	}
	d.ensureDeadline()
	if d.deadlinePassed() {
		d.abort(kind, t, fmt.Sprintf("%s not ready within %s (%s)", tc.Name, d.t.grace, tc.describe()))
		return
	}
	d.setJob(v1alpha1.JobReconciling, "")
	d.progressing("Progressing", "waiting for %s to become ready (abort at %s)%s", tc.Name,
		d.st.AbortTimestamp.UTC().Format("2006-01-02T15:04:05Z"), tc.errorNote())
	d.requeue(d.until(d.st.AbortTimestamp))
}

// targetReady: T runs. Cut over (Automatic or promoted) after the
// deletion delay; in Manual mode wait for a promotion, with no deadline.
func (d *decider) targetReady(kind transitionKind, t Color, tc, oc *Child) {
	first := d.st.DeploymentReadyTimestamp == nil
	if first {
		d.st.DeploymentReadyTimestamp = d.deadline(d.now)
	}
	if kind != kindBlueGreen {
		if oc != nil && !oc.Deleting && oc.suspendedSpec() {
			d.deleteChild(t.Other()) // a suspended leftover of an abort
		}
		d.finalize(kind, t, tc)
		return
	}
	if d.p.PromotionMode() == v1alpha1.PromotionManual && !d.promoteRequested() {
		d.waitForPromotion(t, tc, oc, first)
		return
	}
	if at := d.st.DeploymentReadyTimestamp.Add(d.t.deletionDelay); d.now.Before(at) {
		// A promotion is acknowledged at the cut-over, not before: until
		// then it is still pending.
		d.setJob(v1alpha1.JobReconciling, "")
		d.progressing("WaitingForDeletionDelay", "%s is ready; deleting %s at %s", tc.Name, oc.Name, at.UTC().Format("2006-01-02T15:04:05Z"))
		d.requeue(at.Sub(d.now))
		return
	}
	if d.promoteRequested() {
		d.ackPromote()
	}
	d.deleteChild(t.Other())
	d.finalize(kind, t, tc)
}

func (d *decider) waitForPromotion(t Color, tc, oc *Child, first bool) {
	msg := fmt.Sprintf("waiting for promotion: %s is ready and %s keeps running; run %s to cut over or %s to roll back",
		tc.Name, oc.Name, d.cmd("promote"), d.cmd("abort"))
	if first {
		d.event(false, "WaitingForPromotion", "%s", msg)
	}
	d.setJob(v1alpha1.JobReconciling, "")
	d.progressing("WaitingForPromotion", "%s", msg)
}

// finalize makes T the active colour (FLIP-503 finalize) and goes on with
// any change that waited for the transition.
func (d *decider) finalize(kind transitionKind, t Color, tc *Child) {
	reason, msg := "Promoted", fmt.Sprintf("%s is active with %s", tc.Name, revOr(tc.Revision))
	switch kind {
	case kindFirst:
		reason = "DeploymentCompleted"
	case kindInPlace:
		reason = "PatchCompleted"
	}
	d.st.BlueGreenState = activeState(t)
	d.st.ActiveDeployment = tc.Name
	d.st.ActiveRevision = tc.Revision
	d.wentLive(tc.Revision)
	d.resetMarkers()
	d.setJob(v1alpha1.JobRunning, "")
	d.succeeded(tc)
	d.event(false, reason, "%s", msg)
	d.active(t)
}

func (d *decider) finalizeSuspended(t Color, tc *Child) {
	d.st.BlueGreenState = activeState(t)
	d.st.ActiveDeployment = tc.Name
	d.st.ActiveRevision = tc.Revision
	d.wentLive(tc.Revision)
	d.resetMarkers()
	d.setJob(v1alpha1.JobSuspended, "")
	d.succeeded(tc)
	d.event(false, "Suspended", "%s is suspended", tc.Name)
	d.active(t)
}

// succeeded ends the rollout under way as Succeeded for the revision tc
// runs. A rollout whose target a later revision replaced in place (a
// suspend applied over an in-place change whose status write was lost)
// is superseded by that revision's, which is the one that succeeded.
func (d *decider) succeeded(tc *Child) {
	if r := d.current(); r != nil && r.Revision != tc.Revision && tc.Revision == d.revision() {
		d.supersede(r.RestoredFrom)
	}
	d.end(v1alpha1.RolloutSucceeded, "")
}

// abort gives up on T. A blue/green transition suspends T and keeps the
// old colour; a first deployment suspends T; an in-place change leaves the
// only job alone (suspending it would stop the very job we protect).
func (d *decider) abort(kind transitionKind, t Color, cause string) {
	tc, o := d.child(t), t.Other()
	d.resetMarkers()
	retry := "Push a new commit or run " + d.cmd("retry") + " to try again"
	switch kind {
	case kindBlueGreen:
		d.suspendChild(tc)
		d.aborted(fmt.Sprintf("transition to %s aborted: %s; %s keeps running. %s", d.childName(t), cause, d.childName(o), retry))
		d.st.BlueGreenState = activeState(o)
		d.active(o)
	case kindFirst:
		d.suspendChild(tc)
		d.aborted(fmt.Sprintf("deployment of %s aborted: %s; it is suspended. %s", d.childName(t), cause, retry))
		d.initializing()
	default:
		d.aborted(fmt.Sprintf("in-place change of %s did not complete: %s; the job is left as it is. %s", d.childName(t), cause, retry))
		d.st.BlueGreenState = activeState(t)
		d.active(t)
	}
}

// aborted reports an aborted rollout: FAILING with msg, a Warning event,
// and its history entry ended with msg, before anything starts anew.
func (d *decider) aborted(msg string) {
	d.fail(msg)
	d.event(true, "Aborted", "%s", msg)
	d.end(v1alpha1.RolloutAborted, msg)
}

// maxLiveRevisions bounds status.liveRevisions.
const maxLiveRevisions = 8

// wentLive records that rev became the active revision. The commit
// statuses read it: a revision that went live keeps its success, even
// when the forge was down until a later one replaced it.
func (d *decider) wentLive(rev string) {
	live := d.st.LiveRevisions
	if rev == "" || (len(live) > 0 && live[len(live)-1] == rev) {
		return
	}
	live = append(slices.Clone(live), rev)
	if len(live) > maxLiveRevisions {
		live = live[len(live)-maxLiveRevisions:]
	}
	d.st.LiveRevisions = live
}
