/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// active.go: the INITIALIZING_BLUE and ACTIVE_<colour> states — the first
// deployment, adopting children of a parent without status, and starting an
// in-place patch or a blue/green transition for a pending change.

package bluegreen

import (
	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// initializing handles INITIALIZING_BLUE: nothing runs yet (first
// deployment, or a first deployment that aborted).
func (d *decider) initializing() {
	if d.st.BlueGreenState == "" && d.adopt() {
		return
	}
	d.st.BlueGreenState = v1alpha1.InitializingBlue
	d.st.ActiveDeployment = ""
	d.ackIdleRequests()
	if d.spec.Template.Spec.Suspended() {
		d.initialSuspended()
		return
	}
	pending := d.specPending() || d.retryRequested() || d.st.JobStatus.State == v1alpha1.JobSuspended
	if !pending {
		return
	}
	if b := d.child(Blue); b != nil && b.Deleting {
		d.progressing("WaitingForDeletion", "waiting for FlinkDeployment %s to be deleted before deploying", b.Name)
		d.requeue(d.t.interval)
		return
	}
	from, ok := d.firstState()
	if !ok {
		return
	}
	d.startFirst(Blue, "DeploymentStarted", from)
}

// adopt takes over the children of a parent without status (it was lost
// or wiped): the running colour becomes the active one, instead of a first
// deployment beside it that would replace it with a job started from
// spec.template. Another running colour is suspended (the Flink operator
// keeps its state in a savepoint). A suspended child is adopted too: it
// holds the state of a job that was suspended.
func (d *decider) adopt() bool {
	pick := d.adoptee()
	if pick == nil {
		return false
	}
	d.st.BlueGreenState, d.st.ActiveDeployment = activeState(pick.Color), pick.Name
	d.suspendChild(d.child(pick.Color.Other()))
	d.event(true, "Adopted", "status.blueGreenState was empty while %s runs: %s is taken as the active deployment", pick.Name, pick.Name)
	d.active(pick.Color)
	return true
}

// adoptee is the child adopt takes over, nil when there is none.
func (d *decider) adoptee() *Child {
	var pick *Child
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c != nil && !c.Deleting && !c.Foreign && (pick == nil || adoptBefore(c, pick)) {
			pick = c
		}
	}
	return pick
}

// adoptBefore orders the candidates of adopt: running before suspended,
// ready before not ready, older before newer.
func adoptBefore(a, b *Child) bool {
	if a.suspendedSpec() != b.suspendedSpec() {
		return !a.suspendedSpec()
	}
	if a.Ready() != b.Ready() {
		return a.Ready()
	}
	return a.Created.Before(b.Created)
}

// initialSuspended: FLIP-503 creates no child for a suspended template.
func (d *decider) initialSuspended() {
	if d.st.JobStatus.State != v1alpha1.JobSuspended {
		d.event(false, "Suspended", "spec.template.spec.job.state is suspended: no FlinkDeployment is started")
		// Nothing is deployed: the rollout is done as it begins.
		d.begin(v1alpha1.RolloutRecord{Kind: v1alpha1.RolloutFirst})
		d.end(v1alpha1.RolloutSucceeded, "")
	}
	d.setJob(v1alpha1.JobSuspended, "")
	d.st.TargetRevision = d.revision()
	d.suspendChild(d.child(Blue))
	d.suspendChild(d.child(Green))
}

// startFirst deploys colour c from the template with nothing to hand over
// from: a first deployment.
func (d *decider) startFirst(c Color, reason string, from firstStart) {
	d.begin(v1alpha1.RolloutRecord{Kind: v1alpha1.RolloutFirst, To: d.childName(c), RestoredFrom: from.path,
		Record: from.record, StartedEmpty: from.empty})
	d.apply(d.desiredChild(c, from.path))
	if from.reason != "" {
		d.event(false, from.reason, "%s", from.msg)
	}
	d.ackRetry()
	d.stamp()
	d.st.BlueGreenState = transitioningTo(c)
	d.st.ActiveDeployment = ""
	d.st.TargetRevision = d.revision()
	d.st.TransitionStartTime = d.ts(d.now)
	d.armDeadline()
	d.st.DeploymentReadyTimestamp = nil
	d.st.Savepoint = nil
	d.setJob(v1alpha1.JobReconciling, "")
	d.progressing("Progressing", "deploying %s (%s)", d.childName(c), revOr(d.revision()))
	d.event(false, reason, "deploying %s from %s", d.childName(c), revOr(d.revision()))
	d.requeue(d.t.interval)
}

// active handles ACTIVE_X: X runs; a pending change starts an in-place
// patch or a blue/green transition.
func (d *decider) active(x Color) {
	a := d.child(x)
	d.st.BlueGreenState = activeState(x)
	d.st.ActiveDeployment = d.childName(x)
	d.route(x)
	d.ackIdleRequests()
	if a == nil || a.Deleting {
		d.activeMissing(x, a)
		return
	}
	d.st.ActiveRevision = a.Revision
	if y := d.child(x.Other()); d.startedNewColour(a, y) {
		d.resumeNewColour(x, a, y)
		return
	}
	d.stopOther(x)
	if !d.specPending() && !d.retryRequested() && !d.jobStateDrifted(a) {
		d.mirror(a)
		return
	}
	rollout, diff := Plan(d.baseOf(a), d.spec)
	switch {
	case rollout == RolloutNothing && d.retryRequested() && d.inPlaceAborted(a):
		// The patch is on the child already: the retry watches it again.
		d.patchInPlace(x, a, Diff{Type: DiffPatchChild})
	case rollout == RolloutNothing:
		d.ackRetry()
		d.stamp()
		d.noChange(x, a)
	case rollout.InPlace():
		d.patchInPlace(x, a, diff)
	default:
		d.startTransition(x, a, rollout, diff)
	}
}

// stopOther: beside the active colour X the other colour runs only during
// a transition. Found running in ACTIVE_X, it is the leftover of a
// decision recorded before its actions (see StatusFirst) whose replica
// stopped before making them, and it is stopped as that decision would
// have: deleted when a cut-over replaced it (or a change that starts the
// next transition is pending), suspended when an abort gave it up.
func (d *decider) stopOther(x Color) {
	y := d.child(x.Other())
	if y == nil || y.Deleting || y.suspendedSpec() || d.deleting(y.Name) || d.suspending(y.Name) {
		return
	}
	if d.cutOverFrom(y.Name, d.childName(x)) || d.specPending() || d.retryRequested() {
		d.deleteChild(y.Color)
		d.event(false, "LeftoverDeleted", "%s is active: deleting %s, which still ran", d.childName(x), y.Name)
		return
	}
	d.suspendChild(y)
	d.event(false, "LeftoverSuspended", "%s is active: suspending %s, which still ran after the abort", d.childName(x), y.Name)
}

// startedNewColour reports y, the other colour, as the new colour that the
// pending change starts from spec.template (a stateless rollout or a
// savepoint redeploy: no savepoint of a, the active child, is taken): it
// runs the spec this decision would apply, from the path it would apply
// it with, whatever revision it carries (a later commit may change
// nothing in the spec). The decision that started it lost its status
// write: the transition had begun, so neither a rollout window that has
// closed since nor an active job that stopped being ready holds it back.
func (d *decider) startedNewColour(a, y *Child) bool {
	if a == nil || y == nil || y.Deleting || y.Foreign || y.suspendedSpec() || !d.specPending() || d.cutOverFrom(y.Name, a.Name) {
		return false // the colour the last cut-over left is not a new one
	}
	switch rollout, _ := Plan(d.baseOf(a), d.spec); rollout {
	case RolloutBlueGreenStateless, RolloutSavepointRedeploy:
	default:
		return false
	}
	return Classify(d.baseOf(y), d.spec).Type == DiffIgnore && ownPath(y) == d.templateSavepointPath()
}

// resumeNewColour takes y up again as the target of the transition from
// a that started it: the apply changes nothing but the revision, and y is
// never deleted, which would start its job again.
func (d *decider) resumeNewColour(x Color, a, y *Child) {
	_, diff := Plan(d.baseOf(a), d.spec)
	d.ackRetry()
	d.st.Savepoint = nil
	d.begin(d.blueGreenFrom(x, ""))
	d.startNewColour(y.Color, d.templateSavepointPath(), diff)
}

// jobStateDrifted reports an active child whose job state is not the
// spec's although no change is pending: a suspend or resume applied by a
// decision whose status write was lost (the child carries a revision the
// status never recorded), then reverted in Git. The child is brought
// back to what Git says. A child that kept its revision was not changed
// by a lost decision: a suspend the cluster rejected is not tried again.
func (d *decider) jobStateDrifted(a *Child) bool {
	prev := &d.in.Parent.Status
	return a.suspendedSpec() != d.spec.Template.Spec.Suspended() &&
		a.Revision != prev.ActiveRevision && a.Revision != prev.TargetRevision
}

// cutOverFrom reports whether the last rollout was a cut-over from the
// child named from to the child named to.
func (d *decider) cutOverFrom(from, to string) bool {
	h := d.st.History
	if len(h) == 0 {
		return false
	}
	r := h[len(h)-1]
	return r.Kind == v1alpha1.RolloutBlueGreen && r.Outcome == v1alpha1.RolloutSucceeded && r.From == from && r.To == to
}

// inPlacePath is the initialSavepointPath of a child patched in place: its
// own (the savepoint it was started from), unless the patch sets a new
// savepointRedeployNonce: the Flink operator then redeploys from
// initialSavepointPath, which must be the one the user chose (a resume
// with a new nonce is RESUME, not SAVEPOINT_REDEPLOY, in Classify).
func (d *decider) inPlacePath(c *Child) string {
	if newRedeployNonce(c, d.spec) {
		return d.templateSavepointPath()
	}
	if c.Spec.Job == nil {
		return ""
	}
	return c.Spec.Job.InitialSavepointPath
}

// newRedeployNonce reports whether the spec sets a savepointRedeployNonce
// the child does not have yet.
func newRedeployNonce(c *Child, spec *v1alpha1.FlinkBlueGreenDeploymentSpec) bool {
	n := spec.Template.Spec.Job.SavepointRedeployNonce
	if n == nil {
		return false
	}
	return c.Spec.Job == nil || c.Spec.Job.SavepointRedeployNonce == nil || *c.Spec.Job.SavepointRedeployNonce != *n
}

// noChange: the spec is what X already runs (a revert of an aborted
// change, or a change of fields that roll nothing out). The revision is
// handled: it becomes the target, whose rollout is done, and the colour
// the aborted rollout of the previous target left suspended is deleted,
// as the next transition would (it holds no state the running job needs:
// X kept running since). A suspended colour of unknown origin (status
// lost, adopted children) is left alone.
func (d *decider) noChange(x Color, a *Child) {
	aborted := d.in.Parent.Status.TargetRevision
	d.st.TargetRevision = d.revision()
	if b := d.child(x.Other()); b != nil && !b.Deleting && !d.deleting(b.Name) && (b.suspendedSpec() || d.suspending(b.Name)) &&
		aborted != "" && b.Revision == aborted {
		d.deleteChild(b.Color)
		d.event(false, "LeftoverDeleted", "%s already runs the spec of %s: deleting %s, left suspended by an aborted transition",
			a.Name, revOr(d.revision()), b.Name)
	}
	d.settle(a)
}

// settle reports the active child's job once nothing is left to do:
// SUSPENDED once the Flink operator has stopped the job a suspended spec
// asks to stop, RECONCILING until then.
func (d *decider) settle(a *Child) {
	switch {
	case a.suspended():
		d.setJob(v1alpha1.JobSuspended, "")
	case a.Ready():
		d.setJob(v1alpha1.JobRunning, "")
	default:
		d.setJob(v1alpha1.JobReconciling, "")
	}
}

// mirror keeps jobStatus.state true to the active child while nothing is
// in progress: RUNNING only while the child runs its current spec,
// SUSPENDED only once its job has stopped as asked, and RECONCILING while
// the Flink operator brings it (back) up or stops it. FAILING reports a
// rollout's outcome and stays until the next change.
func (d *decider) mirror(a *Child) {
	switch {
	case d.st.JobStatus.State == v1alpha1.JobFailing && !d.recoveredInPlace(a):
	case a.suspended():
		d.setJob(v1alpha1.JobSuspended, "")
	default:
		if a.Ready() {
			d.setJob(v1alpha1.JobRunning, "")
		} else {
			d.setJob(v1alpha1.JobReconciling, "")
		}
	}
}

// inPlaceAborted reports that the last rollout was an in-place change
// of a that aborted, and that a still carries its revision: the abort
// left the job as it was, the change applied.
func (d *decider) inPlaceAborted(a *Child) bool {
	h := d.st.History
	if len(h) == 0 {
		return false
	}
	r := h[len(h)-1]
	return r.Kind == v1alpha1.RolloutInPlace && r.Outcome == v1alpha1.RolloutAborted && r.To == a.Name && r.Revision == a.Revision
}

// recoveredInPlace reports a job that came up with an in-place change
// after the change aborted (ready, or suspended as asked): FAILING
// reported the abort, and the status follows the job again.
func (d *decider) recoveredInPlace(a *Child) bool {
	if !(a.Ready() || a.suspended()) || !d.inPlaceAborted(a) {
		return false
	}
	d.event(false, "Recovered", "%s runs %s after its in-place change aborted", a.Name, revOr(a.Revision))
	d.wentLive(a.Revision)
	return true
}

// activeMissing: the active child was deleted behind our back. Its state
// is gone, so only an explicit retry redeploys it from the template.
func (d *decider) activeMissing(x Color, a *Child) {
	name := d.childName(x)
	if y := d.child(x.Other()); a == nil && y != nil && !y.Deleting && !y.Foreign && !y.suspendedSpec() {
		d.takeOver(name, y)
		return
	}
	if a == nil && d.retryRequested() {
		d.startFirst(x, "RedeployStarted", firstStart{path: d.templateSavepointPath()})
		return
	}
	msg := "active FlinkDeployment " + name + " is missing (deleted outside bg-gitops?); its job and state are gone. Run " +
		d.cmd("retry") + " to deploy it again from spec.template"
	if a != nil {
		msg = "active FlinkDeployment " + name + " is being deleted outside bg-gitops; once it is gone, run " +
			d.cmd("retry") + " to deploy it again from spec.template"
		d.requeue(d.t.interval)
	}
	if d.st.Error != msg {
		d.event(true, "ActiveDeploymentMissing", "%s", msg)
	}
	d.fail(msg)
	d.end(v1alpha1.RolloutFailed, msg) // an in-place change whose child vanished
}

// takeOver: the active child named gone is gone while y, the other
// colour, runs. y holds the only job (a status restored to before a
// cut-over, or a transition started by a decision whose status write was
// lost): it becomes the active deployment, never deleted, and a retry
// never starts the gone colour beside it.
func (d *decider) takeOver(gone string, y *Child) {
	d.end(v1alpha1.RolloutFailed, gone+" is gone")
	d.resetMarkers()
	d.st.BlueGreenState, d.st.ActiveDeployment = activeState(y.Color), y.Name
	d.event(false, "CutOver", "%s is gone while %s runs: %s is now the active deployment", gone, y.Name, y.Name)
	if Classify(d.baseOf(y), d.spec).Type != DiffIgnore {
		// y does not run the spec Git says (the colour a cut-over left,
		// its delete lost): that spec is rolled out again from y.
		d.last = nil
	}
	d.active(y.Color)
}

// patchInPlace applies the template to the active child (FLIP-503
// PATCH_CHILD, SUSPEND, RESUME, and any change while the job is
// suspended). It keeps the child's initialSavepointPath. Rollout windows
// do not hold it back.
func (d *decider) patchInPlace(x Color, a *Child, diff Diff) {
	d.begin(v1alpha1.RolloutRecord{Kind: v1alpha1.RolloutInPlace, From: a.Name, To: a.Name})
	d.apply(d.desiredChild(x, d.inPlacePath(a)))
	d.ackRetry()
	d.stamp()
	d.st.BlueGreenState = transitioningTo(x)
	d.st.TargetRevision = d.revision()
	d.st.TransitionStartTime = d.ts(d.now)
	d.armDeadline()
	d.st.DeploymentReadyTimestamp = nil
	d.setJob(v1alpha1.JobReconciling, "")
	d.progressing("Progressing", "patching %s in place (%s)", a.Name, diff.Type)
	if diff.Fields == nil {
		d.event(false, "PatchStarted", "retrying the in-place change of %s to %s", a.Name, revOr(d.revision()))
	} else {
		d.event(false, "PatchStarted", "patching %s in place (%s: %v) to %s", a.Name, diff.Type, diff.Fields, revOr(d.revision()))
	}
	d.requeue(d.t.interval)
}

// startTransition starts a blue/green transition from X, with a
// savepoint if the rollout asks for one. It needs a ready X, no leftover
// of the other colour being deleted, and an open rollout window.
func (d *decider) startTransition(x Color, a *Child, rollout Rollout, diff Diff) {
	y := x.Other()
	if d.runsAbortedPatch(a) {
		d.replaceAbortedPatch(x, a, diff)
		return
	}
	if !a.Ready() {
		d.waitForActive(a, y)
		return
	}
	if b := d.child(y); b != nil {
		d.removeLeftover(b)
		return
	}
	if !d.in.Window.Open {
		d.waitForWindow()
		return
	}
	d.ackRetry()
	if rollout == RolloutBlueGreenSavepoint {
		d.startSavepoint(x, a)
		return
	}
	d.st.Savepoint = nil
	d.begin(d.blueGreenFrom(x, ""))
	d.startNewColour(y, d.templateSavepointPath(), diff)
}

// removeLeftover deletes the other colour left suspended by an aborted
// transition and waits until it is gone. The Flink operator reads
// initialSavepointPath only when it first deploys a FlinkDeployment, so
// re-using the leftover would start the new job from the leftover's own
// (stale or empty) state instead of the fresh savepoint (upstream PR #1059).
func (d *decider) removeLeftover(b *Child) {
	d.st.TargetRevision = d.revision()
	// The new transition has begun: the abort that left b behind belongs
	// to the previous revision and must not be reported for this one.
	d.setJob(v1alpha1.JobReconciling, "")
	if !b.Deleting && !d.deleting(b.Name) {
		d.deleteChild(b.Color)
	}
	d.progressing("WaitingForDeletion", "deleting FlinkDeployment %s left by an earlier transition before the new one starts", b.Name)
	d.requeue(d.t.interval)
}

// runsAbortedPatch reports a as stuck on the in-place change that aborted
// without ever coming up: not ready, no job running (a job the Flink
// operator rolled back to the last stable spec runs, and holds state), and
// the change never went live (a job that came up with it since,
// recoveredInPlace, and stopped again is not stuck on it).
func (d *decider) runsAbortedPatch(a *Child) bool {
	live := d.st.LiveRevisions
	return !a.Ready() && a.JobState != JobRunning && d.inPlaceAborted(a) &&
		(len(live) == 0 || live[len(live)-1] != a.Revision)
}

// replaceAbortedPatch applies a change to X in place when X is not ready
// because the in-place change it runs never came up (runsAbortedPatch). A blue/green transition needs a ready
// job to take its savepoint from, and waiting for one would wait for the
// very patch that does not come up; the new commit, which the abort asked
// for, replaces that patch as it was made, and the Flink operator upgrades
// the job with its upgradeMode.
func (d *decider) replaceAbortedPatch(x Color, a *Child, diff Diff) {
	d.event(true, "ReplacingAbortedPatch", "%s would be a blue/green transition, but %s never came up with its aborted in-place change %s (%s): "+
		"%s is applied to it in place, the Flink operator upgrades the job with its upgradeMode, no savepoint is taken first, and the rollout window does not hold it back",
		revOr(d.revision()), a.Name, revOr(a.Revision), a.describe(), revOr(d.revision()))
	d.patchInPlace(x, a, diff)
}

// waitForActive: FLIP-503 refuses a transition from a job that is not
// ready. Unlike FLIP-503 the change is not consumed: it starts once the
// job is ready again.
func (d *decider) waitForActive(a *Child, y Color) {
	msg := "transition to " + d.childName(y) + " not possible: active FlinkDeployment " + a.Name +
		" is not ready (" + a.describe() + "); the change starts when it is"
	if d.st.Error != msg {
		d.event(true, "ActiveJobNotReady", "%s", msg)
	}
	d.st.TargetRevision = d.revision()
	d.fail(msg)
	d.progressing("WaitingForActiveJob", "%s", msg)
}

// waitForWindow holds a transition from a ready active job until the
// rollout window opens. The rollout has not failed: a FAILING left by an
// earlier wait for the active job, or by an earlier revision's rollout,
// must not be reported for the revision that now waits.
func (d *decider) waitForWindow() {
	d.st.TargetRevision = d.revision()
	d.setJob(v1alpha1.JobRunning, "")
	msg := d.in.Window.Description
	if msg == "" {
		msg = "waiting for rollout window"
	}
	msg += " to roll out " + revOr(d.revision())
	if c := findCondition(d.st.Conditions, v1alpha1.ReconcilingCondition); c == nil || c.Reason != "WaitingForRolloutWindow" {
		d.event(false, "WaitingForRolloutWindow", "%s", msg)
	}
	d.progressing("WaitingForRolloutWindow", "%s", msg)
	if !d.in.Window.OpensAt.IsZero() {
		d.requeue(d.in.Window.OpensAt.Sub(d.now))
	}
}

// startNewColour deploys Y beside the active colour.
func (d *decider) startNewColour(y Color, savepointPath string, diff Diff) {
	d.supersedeIfRevised(savepointPath)
	d.record(func(r *v1alpha1.RolloutRecord) { r.RestoredFrom = savepointPath })
	d.apply(d.desiredChild(y, savepointPath))
	d.stamp()
	d.st.BlueGreenState = transitioningTo(y)
	d.st.TargetRevision = d.revision()
	if d.st.TransitionStartTime == nil || !d.in.Parent.Status.BlueGreenState.Savepointing() {
		d.st.TransitionStartTime = d.ts(d.now)
	}
	d.armDeadline()
	d.st.DeploymentReadyTimestamp = nil
	d.setJob(v1alpha1.JobReconciling, "")
	from := "spec.template"
	if savepointPath != "" {
		from = "savepoint " + savepointPath
	}
	d.progressing("Progressing", "waiting for %s to become ready", d.childName(y))
	d.event(false, "TransitionStarted", "starting %s from %s (%s: %v), %s keeps running",
		d.childName(y), from, diff.Type, diff.Fields, d.st.ActiveDeployment)
	d.requeue(d.t.interval)
}

func activeState(c Color) v1alpha1.BlueGreenState {
	if c == Blue {
		return v1alpha1.ActiveBlue
	}
	return v1alpha1.ActiveGreen
}

func transitioningTo(c Color) v1alpha1.BlueGreenState {
	if c == Blue {
		return v1alpha1.TransitioningToBlue
	}
	return v1alpha1.TransitioningToGreen
}

func savepointingState(c Color) v1alpha1.BlueGreenState {
	if c == Blue {
		return v1alpha1.SavepointingBlue
	}
	return v1alpha1.SavepointingGreen
}

// route points the parent Ingress at X, the active colour (or asks for it
// to go when spec.ingress is unset).
func (d *decider) route(x Color) {
	d.out.Route = &Route{Child: d.childName(x), Delete: d.spec.Ingress == nil}
}
