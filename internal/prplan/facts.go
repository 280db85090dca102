/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// facts.go: the sentences a changed or removed FlinkBlueGreenDeployment's
// live state adds to its plan.

package prplan

import (
	"fmt"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/review"
)

func (j *Job) add(format string, args ...any) {
	j.Facts = append(j.Facts, fmt.Sprintf(format, args...))
}

// changed: the colour that runs and where the new one starts from, a
// rollout in flight, the window, the promotion and the deadline.
func (jc *jobCtx) changed(j *Job, pl *review.Plan, live, head *v1alpha1.FlinkBlueGreenDeployment, active *bluegreen.Child) {
	if live == nil {
		return
	}
	if inFlight(live.Status.BlueGreenState) {
		jc.inFlight(j, pl, live, head)
	} else {
		running(j, pl, live, active)
	}
	if !newColour(pl.Action) {
		return
	}
	if !jc.window.Open {
		j.add("the rollout window is closed: no new colour starts until it opens at %s (%s)",
			jc.window.OpensAt.UTC().Format(time.RFC3339), jc.window.Description)
	}
	spec := &live.Spec
	if head != nil {
		spec = &head.Spec
	}
	if spec.PromotionMode() == v1alpha1.PromotionManual {
		j.add("promotion is Manual: %s stays active until `bg-gitops promote fbgd %s -n %s`", orNone(live.Status.ActiveDeployment), live.Name, live.Namespace)
	}
	if grace, err := bluegreen.AbortGracePeriod(spec.Configuration); err == nil {
		j.add("abort deadline: %s must be ready within %s (%s) or the transition aborts and %s stays active",
			otherChild(live), grace, v1alpha1.AbortGracePeriodKey, orNone(live.Status.ActiveDeployment))
	}
}

// running: the colour that runs now and what the action does to it. A
// new colour starts only from a ready one (bluegreen's waitForActive).
func running(j *Job, pl *review.Plan, live *v1alpha1.FlinkBlueGreenDeployment, ch *bluegreen.Child) {
	active := live.Status.ActiveDeployment
	if active == "" {
		return
	}
	j.add("%s runs now (%s)", active, live.Status.BlueGreenState)
	if ch != nil && !ch.Ready() && newColour(pl.Action) {
		j.add("%s is not ready: the controller waits and starts %s only once it is", active, otherChild(live))
		return
	}
	switch pl.Action {
	case review.ActionTransitionSavepoint:
		j.add("takes a savepoint of %s and starts %s from it", active, otherChild(live))
	case review.ActionTransitionStateless:
		j.add("starts %s beside %s with no savepoint (stateless), then deletes %s", otherChild(live), active, active)
	case review.ActionSavepointRedeploy:
		j.add("starts %s from the savepoint the template's initialSavepointPath names, not from %s", otherChild(live), active)
	case review.ActionPatch:
		j.add("patches %s in place", active)
	case review.ActionSuspend:
		j.add("suspends %s", active)
	}
}

func inFlight(s v1alpha1.BlueGreenState) bool {
	switch s {
	case v1alpha1.SavepointingBlue, v1alpha1.SavepointingGreen, v1alpha1.TransitioningToBlue, v1alpha1.TransitioningToGreen:
		return true
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "no job"
	}
	return s
}
