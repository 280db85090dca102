/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// scaleByHPA scales the active child through the scale subresource
// (spec.taskManager.replicas of the FlinkDeployment CRD), as an HPA or
// `kubectl scale` does: another field manager now owns the field.
func scaleByHPA(w *world, c Color, replicas string) {
	ch := w.mustChild(c)
	ch.Spec.TaskManager = rawJSON(`{"replicas":` + replicas + `,"resource":{"memory":"1g","cpu":1}}`)
	ch.Overridden = []string{"taskManager.replicas"}
	ch.Generation++
	ch.ObservedGeneration = ch.Generation
}

// A child scaled by an HPA, then a commit that changes only what FLIP-503
// patches in place: the change is patched in place, as it would be on
// the unscaled child.
func TestScaledActiveChildKeepsAnInPlaceChangeInPlace(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	scaleByHPA(w, Blue, "5")
	parallelismDefault(w, "4", "main@sha1:r2")
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectEvents(d, "PatchStarted")
	if w.children[Green] != nil || w.status().Savepoint != nil {
		w.fatalf("a blue/green transition started for an in-place change: %s", describeActions(d.Actions))
	}
	if r := w.status().History[len(w.status().History)-1]; r.Kind != v1alpha1.RolloutInPlace {
		w.fatalf("rollout kind %s, want InPlace", r.Kind)
	}
}

// The scale alone is no change: nothing is pending, nothing is applied.
func TestScaledActiveChildIsNoChange(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	scaleByHPA(w, Blue, "5")
	w.annotate(v1alpha1.RevisionAnnotation, "main@sha1:r2")
	d := w.step()
	w.expectState(sActiveBlue, jRunning)
	for _, a := range d.Actions {
		w.fatalf("the scale of blue led to %s", describeActions([]Action{a}))
	}
}

// A field Git sets is Git's: a commit that changes the replicas the
// template sets is classified from the template's earlier value, and a
// change of a field that needs a new colour still gets one.
func TestScaledActiveChildStillTransitionsForAChangeThatNeedsANewColour(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	scaleByHPA(w, Blue, "5")
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.expectState(sSpBlue, jReconciling)
}
