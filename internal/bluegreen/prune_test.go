/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"reflect"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// Of the FlinkStateSnapshots bg-gitops created for one
// FlinkBlueGreenDeployment, only the finished ones that no job restored
// from (nor the template names) are pruned, the keep newest of them kept.
func TestOnlyFinishedSnapshotsNoJobUsesArePrunedBeyondTheNewestKept(t *testing.T) {
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	snap := func(name, state string, min int) OwnSnapshot {
		return OwnSnapshot{Name: name, State: state, Path: "file:/sp/" + name, Created: at(min)}
	}
	blue := &Child{Name: "orders-blue", Spec: v1alpha1.FlinkDeploymentSpec{Job: &v1alpha1.JobSpec{InitialSavepointPath: "/sp/s1"}}}
	green := &Child{Name: "orders-green", Spec: v1alpha1.FlinkDeploymentSpec{Job: &v1alpha1.JobSpec{InitialSavepointPath: "file:/sp/s2"}}}
	all := []OwnSnapshot{
		snap("s1", SnapshotCompleted, 1), // blue restored from it
		snap("s2", SnapshotCompleted, 2), // green restored from it
		snap("s3", SnapshotCompleted, 3),
		snap("s4", SnapshotFailed, 4),
		snap("s5", SnapshotCompleted, 5),
		snap("s6", SnapshotInProgress, 6),
		snap("s7", "", 7), // not picked up yet
		snap("s8", SnapshotCompleted, 0),
		snap("s9", SnapshotCompleted, 9),   // the rollout's own
		snap("s10", SnapshotCompleted, -1), // the template restores from it
	}
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	p.Spec.Template.Spec.Job = &v1alpha1.JobSpec{InitialSavepointPath: "file:///sp/s10"} // Flink's other spelling
	names := func(ss []OwnSnapshot) []string {
		var n []string
		for _, s := range ss {
			n = append(n, s.Name)
		}
		return n
	}
	for _, tc := range []struct {
		keep int
		want []string
	}{
		{keep: 1, want: []string{"s5", "s4", "s3", "s8"}},
		{keep: 2, want: []string{"s4", "s3", "s8"}},
		{keep: 3, want: []string{"s3", "s8"}},
		{keep: 4, want: []string{"s8"}},
		{keep: 5, want: nil},
		{keep: 0, want: nil},
		{keep: -1, want: nil},
	} {
		if got := names(PrunableSnapshots(p, []*Child{blue, green, nil}, all, tc.keep)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("keep %d: pruned %v, want %v", tc.keep, got, tc.want)
		}
	}
}
