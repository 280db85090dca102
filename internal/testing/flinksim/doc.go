/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package flinksim simulates the Apache Flink Kubernetes Operator for tests
// and the local demo: it reconciles flink.apache.org/v1beta1 FlinkDeployment
// and FlinkStateSnapshot objects on a real API server and reports their
// status the way the operator does (lifecycleState CREATED → DEPLOYED →
// STABLE, jobStatus.state RECONCILING → RUNNING, a jobId, savepoints
// TRIGGER_PENDING → IN_PROGRESS → COMPLETED with a path). Like the
// operator's cluster, a deployed job has the REST Service <name>-rest (port
// "rest", rest.port or 8081), which goes when the job is suspended or the
// FlinkDeployment deleted, so tests can follow where an Ingress points.
//
// Faults are selected by keys in a FlinkDeployment's flinkConfiguration, so
// that a Git commit can cause them (see the Fault* constants). A Lineage
// records which savepoint each job restored from and the record offset it
// carried, so tests can prove that no state was lost across a rollout.
package flinksim

// Keys of spec.flinkConfiguration that select a simulated fault.
const (
	// FaultNeverReady ("true"): the job never becomes RUNNING.
	FaultNeverReady = "bggitops.dev/simulate-never-ready"
	// FaultFailAfter (a Go duration): the job fails that long after it started.
	FaultFailAfter = "bggitops.dev/simulate-fail-after"
	// FaultSavepoint ("fail" or "hang"): savepoints of this job fail or never finish.
	FaultSavepoint = "bggitops.dev/simulate-savepoint"
	// FaultSavepointTimes (an integer N) limits FaultSavepoint to the first
	// N savepoints of this FlinkDeployment; later ones complete. A Git
	// history can then hold the fault without holding every later rollout
	// of the job (internal/testing/chaos).
	FaultSavepointTimes = "bggitops.dev/simulate-savepoint-times"
	// FaultSavepointDelay (a Go duration) overrides Options.SavepointDelay
	// for savepoints of this job: a test that acts while a savepoint is in
	// progress makes that phase last.
	FaultSavepointDelay = "bggitops.dev/simulate-savepoint-delay"
	// FaultFlap (a Go duration D): the job runs for D, is FAILED for D, is
	// restarted as a new job from the failed one's last checkpoint (no offset
	// is lost) and runs for D again, and so on.
	FaultFlap = "bggitops.dev/simulate-flap"
	// FaultObserveDelay (a Go duration) overrides Options.ObserveDelay: a new
	// spec (generation > observedGeneration) leaves the whole status, old
	// observedGeneration included, untouched for that long.
	FaultObserveDelay = "bggitops.dev/simulate-observe-delay"
	// FaultSnapshotControllerOff ("true"): FlinkStateSnapshots of this job
	// are never reconciled, as by an operator started with
	// kubernetes.operator.snapshot.resource.enabled: false, which registers
	// no FlinkStateSnapshot controller (FlinkOperator.
	// registerSnapshotController): no status, no finalizer, while the
	// FlinkDeployments are reconciled as before. The real option is the
	// operator's, not a job's; the fault is a job's so that one test's
	// operator can be "off" while the others' run. Options.
	// SnapshotControllerOff turns it off for every job.
	FaultSnapshotControllerOff = "bggitops.dev/simulate-snapshot-controller-off"
	// FaultSpecError (a message): the operator refuses the spec, as its
	// validation does (FlinkDeploymentController → ReconciliationUtils.
	// applyValidationErrorAndResetSpec): status.error holds the JSON of a
	// ValidationException with the message, observedGeneration stays
	// behind, and a FlinkDeployment never deployed is FAILED; one that runs
	// goes on running its last accepted spec.
	FaultSpecError = "bggitops.dev/simulate-spec-error"
	// StartDelay (a Go duration) overrides the simulator's start-up delay.
	StartDelay = "bggitops.dev/simulate-start-delay"
)
