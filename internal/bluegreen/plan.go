/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// plan.go: Plan and Rollout — how a spec change rolls out from the active
// colour, shared by the controller and `bg-gitops diff`.

package bluegreen

import (
	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// Rollout is how the controller rolls a spec change out over the active
// job. The controller acts on it (active) and `bg-gitops diff` announces
// it, so both take it from Plan.
type Rollout string

// Rollouts.
const (
	// RolloutNothing: nothing the children carry changed.
	RolloutNothing Rollout = "Nothing"
	// RolloutInPlace: the active child is patched in place (PATCH_CHILD,
	// or any change while the job is suspended).
	RolloutInPlace Rollout = "InPlace"
	// RolloutSuspend: the active child is suspended in place.
	RolloutSuspend Rollout = "Suspend"
	// RolloutResume: the active child is resumed in place.
	RolloutResume Rollout = "Resume"
	// RolloutSavepointRedeploy: a new colour starts from the template's
	// initialSavepointPath, without a savepoint of the active job.
	RolloutSavepointRedeploy Rollout = "SavepointRedeploy"
	// RolloutBlueGreenSavepoint: a savepoint of the active job, then a new
	// colour started from it.
	RolloutBlueGreenSavepoint Rollout = "BlueGreenWithSavepoint"
	// RolloutBlueGreenStateless: a new colour started from the template's
	// initialSavepointPath (upgrade mode stateless).
	RolloutBlueGreenStateless Rollout = "BlueGreenStateless"
)

// InPlace reports whether the rollout patches the active child.
func (r Rollout) InPlace() bool {
	return r == RolloutInPlace || r == RolloutSuspend || r == RolloutResume
}

// Plan classifies the change from base, the spec the active job was
// deployed from, to spec, and tells how the controller rolls it out from
// an active colour. A job that base suspends takes every change in place;
// a blue/green transition takes a savepoint when spec's upgrade mode is
// stateful. base is not nil: a first deployment has nothing to plan from.
func Plan(base, spec *v1alpha1.FlinkBlueGreenDeploymentSpec) (Rollout, Diff) {
	diff := Classify(withSavepointPath(base, spec), spec)
	switch {
	case diff.Type == DiffIgnore:
		return RolloutNothing, diff
	case diff.Type == DiffSuspend:
		return RolloutSuspend, diff
	case diff.Type == DiffResume:
		return RolloutResume, diff
	case diff.Type == DiffPatchChild || base.Template.Spec.Suspended():
		return RolloutInPlace, diff
	case diff.Type == DiffSavepointRedeploy:
		return RolloutSavepointRedeploy, diff
	case spec.Template.Spec.Stateful():
		return RolloutBlueGreenSavepoint, diff
	}
	return RolloutBlueGreenStateless, diff
}

// withSavepointPath is base with spec's initialSavepointPath. A running
// child's initialSavepointPath is the controller's (the savepoint it was
// started from), so a new path alone rolls nothing out: the next colour
// deployed from spec.template starts from it.
func withSavepointPath(base, spec *v1alpha1.FlinkBlueGreenDeploymentSpec) *v1alpha1.FlinkBlueGreenDeploymentSpec {
	if base == nil || spec == nil {
		return base
	}
	out := base.DeepCopy()
	if out.Template.Spec.Job == nil {
		out.Template.Spec.Job = &v1alpha1.JobSpec{}
	}
	out.Template.Spec.Job.InitialSavepointPath = ""
	if spec.Template.Spec.Job != nil {
		out.Template.Spec.Job.InitialSavepointPath = spec.Template.Spec.Job.InitialSavepointPath
	}
	return out
}
