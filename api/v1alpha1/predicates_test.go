/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import "testing"

// TestEveryStateHasOnePhase: each state is initializing, active or in
// progress, and exactly one of them.
func TestEveryStateHasOnePhase(t *testing.T) {
	for _, s := range BlueGreenStates() {
		n := 0
		for _, p := range []bool{s == InitializingBlue, s.Active(), s.InProgress()} {
			if p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s is in %d phases", s, n)
		}
		if s.InProgress() != (s.Savepointing() || s.Transitioning()) {
			t.Errorf("%s: in progress is savepointing or transitioning", s)
		}
	}
	if BlueGreenState("").Active() || BlueGreenState("").InProgress() {
		t.Error("an empty state is neither active nor in progress")
	}
}

func TestSpecDefaults(t *testing.T) {
	for _, tc := range []struct {
		job                 *JobSpec
		state, mode         string
		suspended, stateful bool
	}{
		{nil, JobStateRunning, UpgradeModeStateless, false, false},
		{&JobSpec{}, JobStateRunning, UpgradeModeStateless, false, false},
		{&JobSpec{State: JobStateSuspended, UpgradeMode: UpgradeModeSavepoint}, JobStateSuspended, UpgradeModeSavepoint, true, true},
		{&JobSpec{UpgradeMode: UpgradeModeLastState}, JobStateRunning, UpgradeModeLastState, false, true},
		{&JobSpec{State: JobStateRunning, UpgradeMode: UpgradeModeStateless}, JobStateRunning, UpgradeModeStateless, false, false},
	} {
		s := &FlinkDeploymentSpec{Job: tc.job}
		if s.JobStateOrDefault() != tc.state || s.UpgradeModeOrDefault() != tc.mode ||
			s.Suspended() != tc.suspended || s.Stateful() != tc.stateful {
			t.Errorf("%+v: got %s %s suspended=%v stateful=%v", tc.job, s.JobStateOrDefault(), s.UpgradeModeOrDefault(), s.Suspended(), s.Stateful())
		}
	}
}
