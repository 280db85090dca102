/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

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
