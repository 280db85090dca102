/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// predicates.go: predicates on the API types — which BlueGreenState a
// deployment is in, and a FlinkDeploymentSpec's job state, upgrade mode and
// whether it is stateful.

package v1alpha1

// The predicates and defaults of the API types live here, once, so that the
// controller, the metrics, the commit statuses and `bg-gitops diff` cannot
// disagree on what a state or an unset field means.

// BlueGreenStates lists every FLIP-503 state, in the order of the enum.
func BlueGreenStates() []BlueGreenState {
	return []BlueGreenState{
		InitializingBlue, SavepointingBlue, SavepointingGreen,
		TransitioningToBlue, TransitioningToGreen, ActiveBlue, ActiveGreen,
	}
}

// Active reports ACTIVE_BLUE or ACTIVE_GREEN: one colour runs and nothing
// is in progress.
func (s BlueGreenState) Active() bool {
	return s == ActiveBlue || s == ActiveGreen
}

// Savepointing reports SAVEPOINTING_BLUE or SAVEPOINTING_GREEN.
func (s BlueGreenState) Savepointing() bool {
	return s == SavepointingBlue || s == SavepointingGreen
}

// Transitioning reports TRANSITIONING_TO_BLUE or TRANSITIONING_TO_GREEN: a
// child is being deployed or patched.
func (s BlueGreenState) Transitioning() bool {
	return s == TransitioningToBlue || s == TransitioningToGreen
}

// InProgress reports a rollout under way: savepointing or transitioning.
func (s BlueGreenState) InProgress() bool {
	return s.Savepointing() || s.Transitioning()
}

// JobStateOrDefault is job.state, running when unset.
func (in *FlinkDeploymentSpec) JobStateOrDefault() string {
	if in.Job == nil || in.Job.State == "" {
		return JobStateRunning
	}
	return in.Job.State
}

// UpgradeModeOrDefault is job.upgradeMode, stateless when unset.
func (in *FlinkDeploymentSpec) UpgradeModeOrDefault() string {
	if in.Job == nil || in.Job.UpgradeMode == "" {
		return UpgradeModeStateless
	}
	return in.Job.UpgradeMode
}

// Suspended reports whether the job is asked to be suspended.
func (in *FlinkDeploymentSpec) Suspended() bool {
	return in.JobStateOrDefault() == JobStateSuspended
}

// Stateful reports whether the job's state is carried over an upgrade
// (upgrade mode savepoint or last-state): a blue/green transition then
// starts the new colour from a savepoint of the old one.
func (in *FlinkDeploymentSpec) Stateful() bool {
	return in.UpgradeModeOrDefault() != UpgradeModeStateless
}

// RunningJobState is the state of the job that runs (ActiveJobState, as
// the Flink operator reports it: the JOB column of `kubectl get`), or the
// status's summary while no colour is active. JobStatus.State says
// RECONCILING for the whole of a rollout while the job that runs is
// RUNNING.
func (st FlinkBlueGreenDeploymentStatus) RunningJobState() string {
	if st.ActiveJobState != "" {
		return st.ActiveJobState
	}
	return string(st.JobStatus.State)
}

// RolloutFailedJobRunning reports a status FAILING while the active job
// runs on: what failed is the rollout, not the job.
func (st FlinkBlueGreenDeploymentStatus) RolloutFailedJobRunning() bool {
	return st.JobStatus.State == JobFailing && st.ActiveJobState == string(JobRunning)
}
