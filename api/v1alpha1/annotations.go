/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// annotations.go: the bggitops.dev annotations and labels — the request
// annotations, the stamps on applied objects, the state records of a
// FlinkBlueGreenDeployment — and the condition types both kinds share.

package v1alpha1

// Annotations of the bggitops.dev contract. The request annotations carry a
// timestamp (any unique string); a controller acknowledges each by copying the
// value it handled into status, so the same request is never handled twice
// and a later apply from Git, which does not own these annotations, cannot
// undo them.
const (
	// ReconcileRequestedAtAnnotation asks for an immediate reconcile of a
	// GitRepository; acknowledged in status.lastHandledReconcileAt.
	ReconcileRequestedAtAnnotation = "bggitops.dev/reconcile-requested-at"

	// PlanRequestedAtAnnotation on a GitRepository: plan its open pull
	// requests now (a pull-request webhook sets it); the sync is not
	// touched.
	PlanRequestedAtAnnotation = "bggitops.dev/plan-requested-at"
	// SuspendAnnotation ("true") suspends a GitRepository like spec.suspend
	// does; `bg-gitops suspend|resume` set and remove it.
	SuspendAnnotation = "bggitops.dev/suspend"

	// PromoteRequestedAtAnnotation asks a FlinkBlueGreenDeployment in
	// promotion.mode Manual to cut over to the new colour.
	PromoteRequestedAtAnnotation = "bggitops.dev/promote-requested-at"
	// AbortRequestedAtAnnotation asks a FlinkBlueGreenDeployment to abort the
	// transition in progress and keep the old colour.
	AbortRequestedAtAnnotation = "bggitops.dev/abort-requested-at"
	// RetryRequestedAtAnnotation asks a FlinkBlueGreenDeployment to retry the
	// spec whose transition aborted or failed.
	RetryRequestedAtAnnotation = "bggitops.dev/retry-requested-at"

	// RevisionAnnotation (<ref>@sha1:<hex>) is stamped on every applied object.
	RevisionAnnotation = "bggitops.dev/revision"
	// JobRevisionAnnotation is stamped on the FlinkStateSnapshots bg-gitops
	// creates: the revision of the job the savepoint was taken of (the
	// FlinkDeployment's bggitops.dev/revision), where RevisionAnnotation
	// names the revision whose rollout it is for.
	JobRevisionAnnotation = "bggitops.dev/job-revision"
	// SourceAnnotation (<namespace>/<name> of the GitRepository) is stamped on
	// every applied object.
	SourceAnnotation = "bggitops.dev/source"
	// PruneAnnotation set to "disabled" keeps an object when it is removed
	// from Git.
	PruneAnnotation = "bggitops.dev/prune"
	// PruneDisabledValue is the value of PruneAnnotation that opts out.
	PruneDisabledValue = "disabled"
	// AdoptAnnotation set to "enabled" on an object in Git lets a
	// GitRepository take over an object of that identity that already
	// exists in the cluster without a source (made by hand or by another
	// tool). An object of another GitRepository is never taken over.
	AdoptAnnotation = "bggitops.dev/adopt"
	// AdoptEnabledValue is the value of AdoptAnnotation that opts in.
	AdoptEnabledValue = "enabled"
)

// The state lifecycle of a FlinkBlueGreenDeployment: what its deletion
// keeps, and where a new one's first job starts from.
const (
	// FinalSavepointFinalizer is on every FlinkBlueGreenDeployment: its
	// deletion takes a final savepoint of a stateful running job (bounded
	// by bggitops.dev/savepoint-timeout) before the children go.
	FinalSavepointFinalizer = "bggitops.dev/final-savepoint"
	// StateRecordLabel ("true") marks the FlinkStateSnapshot a deletion
	// keeps, not owned by the parent: the record of the state of the
	// FlinkBlueGreenDeployment its FlinkBlueGreenDeploymentLabel names.
	StateRecordLabel = "bggitops.dev/state-record"
	// JobAnnotation on a record names the FlinkDeployment it was taken of.
	JobAnnotation = "bggitops.dev/job"
	// JobIDAnnotation on a record is the id of the Flink job it was taken
	// of (the FlinkDeployment's status.jobStatus.jobId), when known.
	JobIDAnnotation = "bggitops.dev/job-id"
	// LastCompletedSavepointAnnotation on a record is the last savepoint
	// of that job known to have completed before the record was asked
	// for: where a new job starts when the record's own savepoint failed.
	LastCompletedSavepointAnnotation = "bggitops.dev/last-completed-savepoint"
	// InitialStateAnnotation set to InitialStateEmpty on a new
	// FlinkBlueGreenDeployment starts its first job empty on purpose,
	// whatever record exists for its name.
	InitialStateAnnotation = "bggitops.dev/initial-state"
	// InitialStateEmpty is the value of InitialStateAnnotation.
	InitialStateEmpty = "empty"
	// RestoreFromAnnotation names another FlinkBlueGreenDeployment of the
	// namespace whose record the first job starts from (a rename).
	RestoreFromAnnotation = "bggitops.dev/restore-from"
)

// FlinkBlueGreenDeploymentLabel (the parent's name) is on every
// FlinkStateSnapshot a FlinkBlueGreenDeployment takes, so that
// `kubectl get flinkstatesnapshots -l` finds a deployment's savepoints.
const FlinkBlueGreenDeploymentLabel = "bggitops.dev/flinkbluegreendeployment"

// Condition types and reasons shared by both kinds.
const (
	ReadyCondition       = "Ready"
	ReconcilingCondition = "Reconciling"
	StalledCondition     = "Stalled"
	FetchFailedCondition = "FetchFailed"
	BuildFailedCondition = "BuildFailed"
	ApplyFailedCondition = "ApplyFailed"
	// CommitStatusFailedCondition reports that commit statuses cannot be
	// written (wrong token, unknown repository, forge down).
	CommitStatusFailedCondition = "CommitStatusFailed"
	// IngressFailedCondition reports that the Ingress of spec.ingress
	// cannot be made to point at the active colour (an Ingress of that
	// name the FlinkBlueGreenDeployment does not own, a template that is
	// not a URL, a refused write).
	IngressFailedCondition = "IngressFailed"
)
