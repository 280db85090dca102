/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// removal.go: what removing or renaming a FlinkBlueGreenDeployment does to
// its running job, by the state-lifecycle rule (a stateful running job is
// savepointed first and its record kept; see bluegreen's lifecycle.go).

package prplan

import (
	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/review"
)

// removed: a running job stops, after a final savepoint when stateful.
func (jc *jobCtx) removed(j *Job, live *v1alpha1.FlinkBlueGreenDeployment) {
	switch {
	case live == nil:
		return
	case !runs(live):
		j.add("%s runs no job now: removed with its children", live.Name)
		return
	case !live.Spec.Template.Spec.Stateful():
		j.add("stops %s with no savepoint: upgradeMode %s keeps no state", live.Status.ActiveDeployment, live.Spec.Template.Spec.UpgradeModeOrDefault())
		j.StopsWithoutSavepoint = true
		return
	}
	j.add("stops %s after a final savepoint (bounded by %s); the savepoint is kept as the record of %s: a FlinkBlueGreenDeployment named %s created later resumes from it",
		live.Status.ActiveDeployment, v1alpha1.SavepointTimeoutKey, live.Name, live.Name)
	for _, a := range jc.added[live.Namespace] {
		jc.renamedTo(j, live, a)
	}
}

// renamedTo: a FlinkBlueGreenDeployment added beside the removal either
// carries its state over (restore-from) or, starting empty, loses it.
func (jc *jobCtx) renamedTo(j *Job, live, a *v1alpha1.FlinkBlueGreenDeployment) {
	switch {
	case bluegreen.RestoresOnPurpose(a) && bluegreen.RecordOf(a) == live.Name:
		j.add("%s is added and starts from that savepoint (%s: %s)", a.Name, v1alpha1.RestoreFromAnnotation, live.Name)
	case review.StartsEmpty(a):
		j.add("%s is added and starts from empty state: a rename without %s: %s on %s stops the running job's state here", a.Name, v1alpha1.RestoreFromAnnotation, live.Name, a.Name)
		j.StopsWithoutSavepoint = true
	}
}

// addedJob: nothing the live state adds yet but what a rename says on the
// removed one.
func (jc *jobCtx) addedJob(_ *Job, _ *review.Plan, _ *v1alpha1.FlinkBlueGreenDeployment) {}
