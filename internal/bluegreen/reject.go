/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// reject.go: an action the API server refused for good (Input.Rejection)
// turned into a failed rollout, the running colour kept.

package bluegreen

import (
	"fmt"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// rejected turns an action the API server refused for good into a failed
// rollout instead of a retry loop: the spec is marked handled (a new
// commit or a retry tries again), the running colour is left as it is, and
// a new colour that got no further is suspended.
func (d *decider) rejected(r *Rejection) {
	if a := d.adoptee(); d.st.BlueGreenState == "" && a != nil {
		// The status is gone (see adopt): the running child is the active one.
		d.st.BlueGreenState, d.st.ActiveDeployment = activeState(a.Color), a.Name
	}
	d.ackRetry()
	d.resetMarkers()
	d.stamp()
	d.st.TargetRevision = d.revision()
	switch r.Action.Type {
	case CreateSnapshot:
		x := d.colorOf(r.Action.Snapshot.JobName)
		d.beginUnlessUnderWay(d.blueGreenFrom(x, r.Action.Snapshot.Name))
		d.savepointFailed(x, "SavepointRejected", r.cause("the API server rejected savepoint ", r.Action.Snapshot.Name))
	case ApplyChild:
		d.childRejected(r.Action.Child, r.cause("the API server rejected FlinkDeployment ", r.Action.Child.Name))
	default:
		d.deleteRejected(r.Action.ChildName, r.cause("the API server refused to delete FlinkDeployment ", r.Action.ChildName))
	}
	d.end(v1alpha1.RolloutFailed, d.st.Error)
	if d.st.BlueGreenState.Active() {
		// The decision this one replaces may have moved the Ingress (a
		// cut-over whose next action was refused): it follows the colour
		// that is active now.
		d.route(d.colorOf(d.st.ActiveDeployment))
	}
}

// cause says what happened to the request for object: refused (what,
// then object), or, when Lasting, failed past a deadline.
func (r *Rejection) cause(what, object string) string {
	if r.Lasting != "" {
		return fmt.Sprintf("%s for %s kept failing past %s: %s", r.Action.Type, object, r.Lasting, r.Message)
	}
	return what + object + ": " + r.Message
}

func retryHint(d *decider) string {
	return "Fix the cause and push a new commit, or run " + d.cmd("retry") + " to try again"
}

func (d *decider) childRejected(cs *ChildSpec, cause string) {
	retry := retryHint(d)
	a := d.runningActive()
	if !cs.Spec.Suspended() {
		d.rejectedRollout(a, cs)
	}
	switch {
	case a != nil && a.Name == cs.Name:
		d.st.BlueGreenState, d.st.ActiveDeployment, d.st.ActiveRevision = activeState(a.Color), a.Name, a.Revision
		d.fail("in-place change of " + a.Name + " not applied: " + cause + "; the job is left as it is. " + retry)
	case a != nil && cs.Spec.Suspended():
		d.deleteRefusedSuspend(a, cs, cause)
		return
	case a != nil:
		d.suspendChild(d.child(cs.Color))
		d.st.BlueGreenState, d.st.ActiveDeployment, d.st.ActiveRevision = activeState(a.Color), a.Name, a.Revision
		d.fail("transition to " + cs.Name + " not started: " + cause + "; " + a.Name + " keeps running. " + retry)
	case d.st.BlueGreenState.Active():
		d.fail("redeploy of " + cs.Name + " not started: " + cause + ". " + retry)
	default:
		d.suspendChild(d.child(cs.Color))
		d.st.BlueGreenState, d.st.ActiveDeployment = v1alpha1.InitializingBlue, ""
		d.fail("deployment of " + cs.Name + " not started: " + cause + ". " + retry)
	}
	d.event(true, "Rejected", "%s", d.st.Error)
}

// deleteRefusedSuspend: the suspend of the colour an abort gives up (or
// of another colour beside the active one) was refused. Two running jobs
// must not wait for a person: the colour is deleted instead; the active
// one, a, holds the state.
func (d *decider) deleteRefusedSuspend(a *Child, cs *ChildSpec, cause string) {
	if c := d.child(cs.Color); c != nil && !c.Deleting {
		d.deleteChild(cs.Color)
	}
	d.st.BlueGreenState, d.st.ActiveDeployment, d.st.ActiveRevision = activeState(a.Color), a.Name, a.Revision
	d.fail("suspend of " + cs.Name + " not applied: " + cause + "; " + cs.Name + " is deleted instead and " + a.Name +
		" keeps running. " + retryHint(d))
	d.event(true, "SuspendRejected", "%s", d.st.Error)
}

// rejectedRollout makes the history entry the refused apply of cs ends:
// the rollout under way, superseded first when cs carries a spec changed
// during it, or one of its own when cs was to start it.
func (d *decider) rejectedRollout(a *Child, cs *ChildSpec) {
	if r := d.current(); r == nil {
		d.begin(d.refusedRollout(a, cs))
	} else if r.Revision != cs.Revision {
		d.supersede(cs.Spec.Job.InitialSavepointPath)
	}
}

// refusedRollout is the history entry of a rollout whose first request,
// to apply cs, was refused: in place on the running active child, a
// transition from it, or a first deployment (or redeploy) without one.
func (d *decider) refusedRollout(a *Child, cs *ChildSpec) v1alpha1.RolloutRecord {
	r := v1alpha1.RolloutRecord{Kind: v1alpha1.RolloutFirst, To: cs.Name, RestoredFrom: cs.Spec.Job.InitialSavepointPath}
	switch {
	case a != nil && a.Name == cs.Name:
		r.Kind, r.From, r.RestoredFrom = v1alpha1.RolloutInPlace, a.Name, "" // see RolloutRecord.RestoredFrom
	case a != nil:
		r.Kind, r.From = v1alpha1.RolloutBlueGreen, a.Name
	}
	return r
}

// deleteRejected: a delete the API server refuses (RBAC, a webhook) ends
// what needed it: the active colour keeps running, the other is
// suspended (a cut-over, a restart of the new colour), and a new commit or
// a retry tries again.
func (d *decider) deleteRejected(name, cause string) {
	a := d.runningActive()
	if a == nil {
		d.suspendChild(d.child(d.colorOf(name)))
		d.st.BlueGreenState, d.st.ActiveDeployment = v1alpha1.InitializingBlue, ""
		d.fail(cause + ". " + retryHint(d))
	} else {
		d.suspendChild(d.child(a.Color.Other()))
		d.st.BlueGreenState, d.st.ActiveDeployment, d.st.ActiveRevision = activeState(a.Color), a.Name, a.Revision
		d.fail(cause + "; " + a.Name + " keeps running. " + retryHint(d))
	}
	d.event(true, "DeleteRejected", "%s", d.st.Error)
}

// runningActive is the child that runs the active job according to the
// status: status.activeDeployment, or the target of a blue/green
// transition whose old colour is gone (finalised forward).
func (d *decider) runningActive() *Child {
	name := d.st.ActiveDeployment
	if t, ok := transitionTarget(d.st.BlueGreenState); ok && name != "" && name != d.childName(t) {
		if o := d.child(t.Other()); o == nil || o.Deleting {
			name = d.childName(t)
		}
	}
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c != nil && c.Name == name && !c.Deleting {
			return c
		}
	}
	return nil
}

func (d *decider) colorOf(childName string) Color {
	if childName == d.childName(Green) {
		return Green
	}
	return Blue
}

func transitionTarget(s v1alpha1.BlueGreenState) (Color, bool) {
	switch s {
	case v1alpha1.TransitioningToBlue:
		return Blue, true
	case v1alpha1.TransitioningToGreen:
		return Green, true
	}
	return "", false
}
