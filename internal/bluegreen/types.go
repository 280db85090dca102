/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// types.go: the types Decide reads and returns — Color, Child, Snapshot,
// Record, Window and Input in; Decision, Action, Event and Route out.

package bluegreen

import (
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// Color is the value of the TypeLabel on a child: BLUE or GREEN.
type Color string

// The two colours.
const (
	Blue  Color = "BLUE"
	Green Color = "GREEN"
)

// TypeLabel carries a child's colour, as in FLIP-503.
const TypeLabel = "flink/blue-green-deployment-type"

// Other returns the other colour.
func (c Color) Other() Color {
	if c == Blue {
		return Green
	}
	return Blue
}

// ChildName is the name of the child of the given colour: <parent>-blue or
// <parent>-green.
func ChildName(parent string, c Color) string {
	return parent + "-" + strings.ToLower(string(c))
}

// Flink operator states of a child FlinkDeployment (upper case, as the
// operator reports them).
const (
	LifecycleStable    = "STABLE"
	LifecycleSuspended = "SUSPENDED"
	JobRunning         = "RUNNING"
)

// Child is an observed child FlinkDeployment.
type Child struct {
	Name  string
	Color Color
	// Spec is the spec now on the child.
	Spec v1alpha1.FlinkDeploymentSpec
	// Overridden are the fields of Spec, dotted as in Diff.Fields
	// ("taskManager.replicas"), that another field manager set after
	// bg-gitops applied the child: an HPA or a person scaling it through
	// the scale subresource, a kubectl edit. A rollout is classified
	// from what Git set, so these read as the template has them.
	Overridden []string
	// Revision is the child's bggitops.dev/revision annotation.
	Revision string
	// LifecycleState is status.lifecycleState (CREATED, DEPLOYED, STABLE,
	// SUSPENDED, FAILED, ...).
	LifecycleState string
	// JobState is status.jobStatus.state (RUNNING, RECONCILING, FAILED, ...).
	JobState string
	// JobID is status.jobStatus.jobId.
	JobID string
	// UpgradeSavepointPath is status.jobStatus.upgradeSavepointPath.
	UpgradeSavepointPath string
	// Error is status.error: why the Flink operator refused the spec (a
	// validation error leaves observedGeneration behind) or failed the
	// job, often the JSON of its exception. The adapter scrubs it;
	// Decide quotes it short (see operatorError).
	Error string
	// Labels are metadata.labels; the adapter keeps the parent's on
	// the children (Decide does not read them).
	Labels map[string]string
	// Deleting is true when metadata.deletionTimestamp is set.
	Deleting bool
	// Foreign: the child is not the parent's but an earlier object's of
	// the parent's name (being deleted, or left to the garbage
	// collector). It holds nothing the parent may adopt or start from.
	Foreign bool
	// Unowned: the child has no owner at all: its parent was deleted with
	// propagationPolicy Orphan (kubectl delete --cascade=orphan), or a
	// person made it. The parent adopts it when it runs the parent's job
	// (see notThisJob), and refuses it, leaving it as it is, otherwise.
	Unowned bool
	// Created is metadata.creationTimestamp.
	Created time.Time
	// UID and ResourceVersion are the adapter's preconditions: an action
	// decided on this observation lands only on this very object, as
	// observed (see StatusFirst).
	UID, ResourceVersion string
	// Generation is metadata.generation: it grows with every change of
	// the spec, ours or anyone's (the scale subresource included).
	Generation int64
	// ObservedGeneration is status.observedGeneration: the generation the
	// Flink operator's status describes. Until it reaches Generation, the
	// status describes the previous spec.
	ObservedGeneration int64
}

// Observed reports whether the child's status describes its current spec.
func (c *Child) Observed() bool {
	return c != nil && c.ObservedGeneration >= c.Generation
}

// Ready reports whether the child runs its current spec healthily: the
// Flink operator has observed the spec, and the job is stable and running.
func (c *Child) Ready() bool {
	return c.Observed() && c.LifecycleState == LifecycleStable && c.JobState == JobRunning && !c.Deleting &&
		!c.suspendedSpec()
}

// suspendedSpec reports whether the child is asked to suspend its job.
func (c *Child) suspendedSpec() bool {
	return c.Spec.Suspended()
}

// suspended reports whether the child's job is suspended as asked.
func (c *Child) suspended() bool {
	return c.suspendedSpec() && c.Observed() && c.LifecycleState == LifecycleSuspended
}

// jobStopped reports a job whose state a savepoint cannot take now and
// that will not change before it is started again: stopped for good
// (failed, cancelled, finished, suspended), or stopped by the Flink
// operator with its upgrade savepoint, for an upgrade. A job restarting
// or being deployed is not: it goes on from state newer than any
// savepoint.
func (c *Child) jobStopped() bool {
	switch c.JobState {
	case "FAILED", "CANCELED", "FINISHED", "SUSPENDED":
		return true
	}
	upgrading := c.LifecycleState == "UPGRADING" && c.Spec.UpgradeModeOrDefault() == v1alpha1.UpgradeModeSavepoint && c.UpgradeSavepointPath != ""
	return c.suspended() || upgrading
}

func (c *Child) describe() string {
	s := "lifecycle " + orDash(c.LifecycleState) + ", job " + orDash(c.JobState)
	switch {
	case c.Error != "":
		s += ", Flink operator error: " + operatorError(c.Error)
	case !c.Observed():
		s += ", spec not yet observed by the Flink operator"
	}
	return s
}

// errorNote is "; Flink operator error: <status.error>" for a child the
// operator reports an error for, "" otherwise: it is appended to what a
// wait for the child says.
func (c *Child) errorNote() string {
	if c == nil || c.Error == "" {
		return ""
	}
	return "; Flink operator error: " + operatorError(c.Error)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Snapshot states of a FlinkStateSnapshot.
const (
	SnapshotTriggerPending = "TRIGGER_PENDING"
	SnapshotInProgress     = "IN_PROGRESS"
	SnapshotCompleted      = "COMPLETED"
	SnapshotFailed         = "FAILED"
	SnapshotAbandoned      = "ABANDONED"
)

// Snapshot is the observed FlinkStateSnapshot named in status.savepoint.name.
type Snapshot struct {
	Name  string
	State string
	Path  string
	Error string
	// LastCompleted is a state record's LastCompletedSavepointAnnotation:
	// the savepoint it holds should its own fail or not complete.
	LastCompleted string
	// Created is metadata.creationTimestamp: a savepoint asked for again
	// under the same name (a wiped status) is as old as the first ask.
	Created time.Time
	// Foreign says why the snapshot of that name is not one bg-gitops
	// created for this deployment (made by someone else first: its uid is
	// not the one bg-gitops's create recorded); "" when it is. A
	// transition never restores from a foreign one.
	Foreign string
}

// Record is an observed state record: the FlinkStateSnapshot a deletion
// kept of the job of a FlinkBlueGreenDeployment now gone.
type Record struct {
	// Name is the FlinkStateSnapshot's; Of the FlinkBlueGreenDeployment
	// whose state it records.
	Name, Of string
	// State is status.state; Path the savepoint it holds: status.path
	// once COMPLETED, spec.savepoint.path for one that already existed.
	State, Path string
	// Existing is spec.savepoint.alreadyExists: a record of a savepoint
	// taken before (a suspended job's), complete as created.
	Existing bool
	// LastCompleted is the LastCompletedSavepointAnnotation; Error is
	// status.error.
	LastCompleted, Error string
	// Job and Revision name the FlinkDeployment it was taken of and the
	// Git revision that job ran.
	Job, Revision string
	Created       time.Time
	// Final: the FlinkBlueGreenDeployment it is of is gone (its deletion
	// no longer waits for the savepoint); a record not settled by then
	// holds only its LastCompleted.
	Final bool
}

// Window is the state of the rollout windows at some instant.
type Window struct {
	// Open is true inside a window, and when no window is configured.
	Open bool
	// OpensAt is the start of the next window when closed.
	OpensAt time.Time
	// Description is a human-readable summary for conditions.
	Description string
}

// Input is everything Decide looks at.
type Input struct {
	// Parent carries spec, status, generation and annotations (revision
	// and the promote/abort/retry requests).
	Parent *v1alpha1.FlinkBlueGreenDeployment
	// Blue and Green are the observed children, nil when absent.
	Blue, Green *Child
	// Snapshot is the FlinkStateSnapshot named in status.savepoint.name,
	// nil when absent.
	Snapshot *Snapshot
	// Window is the rollout window state (Open when none is configured).
	Window Window
	// Now is the decision's clock.
	Now time.Time
	// Record is the newest state record (see v1alpha1.StateRecordLabel)
	// of the name RecordOf(Parent) gives, nil when there is none; the
	// first job of a stateful template with no initialSavepointPath
	// starts from it. The adapter looks it up only before the first job.
	Record *Record
	// RestoreSourceLive: the other FlinkBlueGreenDeployment
	// bggitops.dev/restore-from names still exists (a rename whose prune
	// has not happened yet): the first job waits for the record its
	// deletion keeps.
	RestoreSourceLive bool
	// Rejection, when set, is an action of the previous decision on this
	// same observation that the API server refused for good; Decide then
	// turns it into a failed rollout instead of trying again.
	Rejection *Rejection
}

// Rejection is an action the API server refused in a way that retrying
// cannot fix: invalid (422), bad request (400), forbidden (403, including
// an admission webhook's denial).
//
// With Lasting set it is an error retrying might have fixed, which lasted
// past the deadline Lasting names (see Overdue): the rollout ends as that
// deadline says.
type Rejection struct {
	Action  Action
	Message string
	Lasting string
}

// ActionType names what an Action does.
type ActionType string

// Action types.
const (
	// ApplyChild creates or replaces the child with exactly ChildSpec
	// (server-side apply, idempotent).
	ApplyChild ActionType = "ApplyChild"
	// DeleteChild deletes the child named ChildName (NotFound is fine).
	DeleteChild ActionType = "DeleteChild"
	// CreateSnapshot creates a FlinkStateSnapshot. AlreadyExists is no
	// error, but the snapshot found is trusted only by the uid the
	// adapter's own create recorded (see Snapshot.Foreign).
	CreateSnapshot ActionType = "CreateSnapshot"
)

// ChildSpec is the desired state of a child FlinkDeployment. The adapter
// adds the namespace, the parent's labels and the TypeLabel, the owner
// reference and the revision annotation.
type ChildSpec struct {
	Name     string
	Color    Color
	Spec     v1alpha1.FlinkDeploymentSpec
	Revision string
}

// SnapshotSpec is a savepoint request: a FlinkStateSnapshot named Name with
// spec.jobReference {kind: FlinkDeployment, name: JobName} and spec.savepoint.
type SnapshotSpec struct {
	Name    string
	JobName string
	// FormatType is spec.savepoint.formatType, CANONICAL or NATIVE: the
	// template's SavepointFormatKey. Empty when that is not set, leaving
	// the Flink operator's default (CANONICAL).
	FormatType string
	// Revision is the revision whose rollout the savepoint is for: the
	// adapter stamps it on the FlinkStateSnapshot.
	Revision string
	// JobRevision is the revision of the job it is taken of (the child's
	// bggitops.dev/revision): the adapter stamps it as well.
	JobRevision string
	// Record, when set, makes it the state record of a deletion: kept
	// after the parent is gone (not owned), labelled as a record.
	Record *RecordSpec
}

// RecordSpec is what a state record carries besides the savepoint.
type RecordSpec struct {
	// JobID is the Flink job the savepoint is of; Revision (of the
	// SnapshotSpec) is the revision that job runs.
	JobID string
	// LastCompleted is the last savepoint of the job known to have
	// completed (see v1alpha1.LastCompletedSavepointAnnotation).
	LastCompleted string
	// Existing, when set, records that savepoint (alreadyExists) instead
	// of taking one: the job does not run.
	Existing string
}

// Action is one step the adapter executes, in order, before writing status.
type Action struct {
	Type      ActionType
	Child     *ChildSpec
	ChildName string
	Snapshot  *SnapshotSpec
}

// Event is a Kubernetes event to emit on the parent.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Decision is the outcome of Decide.
type Decision struct {
	// Status is the complete next status; the adapter writes it after the
	// actions succeed, and only if it differs from the observed one.
	Status v1alpha1.FlinkBlueGreenDeploymentStatus
	// Actions are executed in order before the status write.
	Actions []Action
	// RequeueAfter is 0 when only watches need to wake the controller.
	RequeueAfter time.Duration
	// Finalize: the parent is being deleted and its state is kept (or
	// given up on): the adapter removes v1alpha1.FinalSavepointFinalizer
	// once the actions are done.
	Finalize bool
	// Events are emitted after the status write, one per state change.
	Events []Event
	// Route is where the parent Ingress must send traffic; nil leaves it
	// as it is (during a transition, or with no active colour).
	Route *Route
}

// Route is the desired parent Ingress (FLIP-503): at every decision in
// ACTIVE_X, X's REST Service; it moves with the cut-over and stays on the
// colour an abort keeps. Set anew at each ACTIVE decision, so a deleted
// or edited Ingress is restored: the adapter writes only a difference.
type Route struct {
	// Child is the FlinkDeployment whose <child>-rest Service the
	// Ingress points at.
	Child string
	// Delete: spec.ingress is unset; the Ingress the parent owns goes.
	Delete bool
}
