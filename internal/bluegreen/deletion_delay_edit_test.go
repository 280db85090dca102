/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// A parent edit that lands while the new colour waits out the deletion
// delay re-specs the new colour; the readiness it reported for the
// previous generation (STABLE, RUNNING, status.observedGeneration behind
// metadata.generation) never retires the old colour, however long the
// Flink operator takes to observe the new spec. The delay counts again
// from the readiness of the edited spec.
//
// Upstream deletes the old colour here (it reads the job state without
// the generation it describes). This passed on the code as it was when
// written: changedDuringTransition drops deploymentReadyTimestamp and
// Child.Ready requires the spec observed; the test pins both.
func TestAParentEditDuringTheDeletionDelayKeepsTheOldColour(t *testing.T) {
	for _, tc := range []struct{ name, rev string }{
		{"a commit", "main@sha1:r3"},
		{"an edit by hand, same revision", "main@sha1:r2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := deployed(t, v1alpha1.UpgradeModeStateless)
			w.config(v1alpha1.DeploymentDeletionDelayKey, "1 min")
			startTransition(w, v1alpha1.UpgradeModeStateless)
			w.ready(Green)
			w.step()
			if w.status().DeploymentReadyTimestamp == nil {
				w.fatalf("green's readiness not recorded")
			}
			w.advance(30 * time.Second)
			w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Job.Parallelism = ptr(int32(4)) }, tc.rev)
			w.step()
			reportsPreviousGeneration(w.mustChild(Green))
			for i := 0; i < 4; i++ {
				w.advance(time.Minute)
				if d := w.step(); w.deletes(d, "orders-blue") {
					w.fatalf("blue deleted on the readiness of green's previous generation")
				}
				w.expectState(sToGreen, jReconciling)
			}
			w.mustChild(Green).ObservedGeneration = w.mustChild(Green).Generation
			w.step()
			if d := w.step(); w.deletes(d, "orders-blue") {
				w.fatalf("blue deleted without a deletion delay after the edited green became ready")
			}
			w.advance(time.Minute)
			w.expectDelete(w.step(), "orders-blue")
		})
	}
}

// reportsPreviousGeneration makes c's status that of its previous
// generation: the Flink operator has not observed the spec just applied.
func reportsPreviousGeneration(c *Child) {
	c.Generation = c.ObservedGeneration + 1
	c.LifecycleState, c.JobState = LifecycleStable, JobRunning
}

func (w *world) deletes(d Decision, name string) bool {
	for _, a := range d.Actions {
		if a.Type == DeleteChild && a.ChildName == name {
			return true
		}
	}
	return false
}
