/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// inflight.go: what a change does to a rollout already in flight, as
// bluegreen's savepointing and transitioning states handle a spec changed
// mid-way (savepoint.go, transition.go: changedDuringTransition).

package prplan

import (
	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/review"
)

// flight is the rollout under way of a live FlinkBlueGreenDeployment.
type flight struct {
	p              *v1alpha1.FlinkBlueGreenDeployment
	state          v1alpha1.BlueGreenState
	active, target string // the colour that runs, the one the rollout starts
	revision       string
	// keepsState: the head's template is stateful.
	keepsState bool
}

func newFlight(p *v1alpha1.FlinkBlueGreenDeployment) flight {
	f := flight{p: p, state: p.Status.BlueGreenState, active: p.Status.ActiveDeployment, revision: p.Status.TargetRevision}
	if f.revision == "" {
		f.revision = "an earlier revision"
	}
	switch f.state {
	case v1alpha1.TransitioningToBlue:
		f.target = bluegreen.ChildName(p.Name, bluegreen.Blue)
	case v1alpha1.TransitioningToGreen:
		f.target = bluegreen.ChildName(p.Name, bluegreen.Green)
	default:
		f.target = otherChild(p)
	}
	return f
}

// inFlight tells what the change does to the rollout under way. The
// action (review, bluegreen.Plan) is judged against the live spec, the
// one being rolled out.
func (jc *jobCtx) inFlight(j *Job, pl *review.Plan, live, head *v1alpha1.FlinkBlueGreenDeployment) {
	f := newFlight(live)
	f.keepsState = head != nil && head.Spec.Template.Spec.Stateful()
	j.add("a rollout of %s is in flight (%s)", f.revision, f.state)
	switch {
	case f.state == v1alpha1.SavepointingBlue || f.state == v1alpha1.SavepointingGreen:
		jc.savepointing(j, pl, f)
	case f.active == "":
		j.add("this change supersedes it: the first deployment's %s is re-applied with this change's spec and its abort deadline starts again", f.target)
	case f.active == f.target:
		inPlace(j, pl, f)
	default:
		jc.transitioning(j, pl, f)
	}
}

// savepointing: the savepoint under way is not given up.
func (jc *jobCtx) savepointing(j *Job, pl *review.Plan, f flight) {
	switch {
	case !jc.window.Open && newColour(pl.Action):
		j.add("once the savepoint of %s completes, the rollout in flight ends superseded, %s stays active and this change waits for the rollout window", f.active, f.active)
	case newColour(pl.Action):
		j.add("this change supersedes it: the savepoint of %s under way goes on, and once it completes %s starts from it with this change's spec", f.active, f.target)
	default:
		j.add("once the savepoint of %s completes, the rollout in flight ends superseded (this change needs no new colour) and %s stays active", f.active, f.active)
	}
}

// transitioning: the new colour f.target runs beside f.active.
func (jc *jobCtx) transitioning(j *Job, pl *review.Plan, f flight) {
	sp := f.p.Status.Savepoint
	noSavepoint := sp == nil || sp.Path == ""
	switch {
	case f.keepsState && noSavepoint && pl.Action != review.ActionSavepointRedeploy:
		// bluegreen's nowKeepsState: the new colour holds none of the
		// old colour's state, so cutting over would lose it.
		j.add("this change supersedes it and keeps state: %s, started without a savepoint of %s, is deleted; %s stays active and the change rolls out from a savepoint of it", f.target, f.active, f.active)
	case !jc.window.Open && newColour(pl.Action):
		j.add("the rollout window is closed: the transition to %s goes on with the spec it started with; this change waits for the window", f.target)
	case !newColour(pl.Action):
		j.add("this change supersedes it and needs no new colour: %s is deleted and %s stays active (patched in place if the change asks)", f.target, f.active)
	case f.p.Spec.Template.Spec.Stateful() && !noSavepoint:
		j.add("this change supersedes it: %s is deleted and started again with this change's spec, from a fresh savepoint of %s when it runs ready, else from savepoint %s again; the abort deadline starts again", f.target, f.active, sp.Path)
	default:
		j.add("this change supersedes it: %s is re-applied with this change's spec and the abort deadline starts again", f.target)
	}
}

// inPlace: the active colour is being patched in place.
func inPlace(j *Job, pl *review.Plan, f flight) {
	if newColour(pl.Action) {
		j.add("%s is being patched in place; this change, which needs a new colour, rolls out once that ends", f.active)
		return
	}
	j.add("this change supersedes it: %s, being patched in place, is re-applied with this change's spec", f.active)
}
