/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreendeployment_types.go: the FlinkBlueGreenDeployment kind — its
// FLIP-503 spec and configuration keys, the blue/green states, and the status
// with its rollout history (RolloutRecord).

package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// FlinkBlueGreenDeploymentKind is the kind of FlinkBlueGreenDeployment objects.
const FlinkBlueGreenDeploymentKind = "FlinkBlueGreenDeployment"

// Keys of spec.configuration. The first three are FLIP-503's; the savepoint
// timeout is ours (FLIP-503 waits for a savepoint forever), and so is the
// snapshot pickup timeout (how long a FlinkStateSnapshot may go without
// any status before the operator's snapshot controller is taken to be off).
const (
	AbortGracePeriodKey        = "kubernetes.operator.bluegreen.abort.grace-period"
	RescheduleIntervalKey      = "kubernetes.operator.bluegreen.reconciliation.reschedule-interval"
	DeploymentDeletionDelayKey = "kubernetes.operator.bluegreen.deployment-deletion.delay"
	SavepointTimeoutKey        = "bggitops.dev/savepoint-timeout"
	SnapshotPickupTimeoutKey   = "bggitops.dev/snapshot-pickup-timeout"
)

// FlinkBlueGreenDeploymentSpec is compatible with the Flink Kubernetes
// Operator's FLIP-503 FlinkBlueGreenDeployment spec.
type FlinkBlueGreenDeploymentSpec struct {
	// Configuration holds the blue/green timers: abort grace period,
	// reschedule interval, deployment deletion delay, savepoint timeout and
	// snapshot pickup timeout.
	// Values are Flink durations ("10 min", "30s"; a bare number is ms).
	// +optional
	Configuration map[string]string `json:"configuration,omitempty"`

	// Template of the FlinkDeployment children.
	// +required
	Template FlinkDeploymentTemplate `json:"template"`

	// Ingress is accepted for compatibility with FLIP-503 manifests.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Ingress *apiextensionsv1.JSON `json:"ingress,omitempty"`

	// Promotion selects automatic or manual cut-over.
	// +optional
	Promotion *Promotion `json:"promotion,omitempty"`
}

// Promotion controls the cut-over to the new colour.
type Promotion struct {
	// Mode Automatic cuts over as soon as the new colour is ready; Manual
	// keeps both running until `bg-gitops promote`.
	// +optional
	// +kubebuilder:default=Automatic
	// +kubebuilder:validation:Enum=Automatic;Manual
	Mode string `json:"mode,omitempty"`
}

// Promotion modes.
const (
	PromotionAutomatic = "Automatic"
	PromotionManual    = "Manual"
)

// FlinkDeploymentTemplate is the template of the children.
type FlinkDeploymentTemplate struct {
	// Metadata is accepted for FLIP-503 compatibility and, like upstream,
	// not copied to the children.
	// +optional
	Metadata *TemplateMetadata `json:"metadata,omitempty"`
	// Spec is a FlinkDeployment spec (application mode: job is required).
	// +required
	Spec FlinkDeploymentSpec `json:"spec"`
}

// TemplateMetadata is the metadata of the template.
type TemplateMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// FlinkDeploymentSpec is the part of flink.apache.org/v1beta1
// FlinkDeployment's spec that a blue/green child carries. Nested objects the
// controller only copies are kept verbatim.
type FlinkDeploymentSpec struct {
	// +optional
	Image string `json:"image,omitempty"`
	// +optional
	ImagePullPolicy string `json:"imagePullPolicy,omitempty"`
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// +optional
	FlinkVersion string `json:"flinkVersion,omitempty"`
	// FlinkConfiguration is Flink's configuration, flat ("a.b": "v") or nested.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	FlinkConfiguration *apiextensionsv1.JSON `json:"flinkConfiguration,omitempty"`
	// +optional
	LogConfiguration map[string]string `json:"logConfiguration,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=native;standalone
	Mode string `json:"mode,omitempty"`
	// +optional
	RestartNonce *int64 `json:"restartNonce,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	PodTemplate *apiextensionsv1.JSON `json:"podTemplate,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	JobManager *apiextensionsv1.JSON `json:"jobManager,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	TaskManager *apiextensionsv1.JSON `json:"taskManager,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Ingress *apiextensionsv1.JSON `json:"ingress,omitempty"`
	// Job is the Flink job; required.
	// +required
	Job *JobSpec `json:"job"`
}

// JobSpec is a FlinkDeployment's job.
type JobSpec struct {
	// +optional
	JarURI string `json:"jarURI,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	Parallelism *int32 `json:"parallelism,omitempty"`
	// +optional
	EntryClass string `json:"entryClass,omitempty"`
	// +optional
	Args []string `json:"args,omitempty"`
	// State is the desired job state (default running).
	// +optional
	// +kubebuilder:validation:Enum=running;suspended
	State string `json:"state,omitempty"`
	// +optional
	SavepointTriggerNonce *int64 `json:"savepointTriggerNonce,omitempty"`
	// +optional
	InitialSavepointPath string `json:"initialSavepointPath,omitempty"`
	// +optional
	CheckpointTriggerNonce *int64 `json:"checkpointTriggerNonce,omitempty"`
	// UpgradeMode: savepoint, last-state or stateless (default stateless).
	// +optional
	// +kubebuilder:validation:Enum=savepoint;last-state;stateless
	UpgradeMode string `json:"upgradeMode,omitempty"`
	// +optional
	AllowNonRestoredState *bool `json:"allowNonRestoredState,omitempty"`
	// +optional
	SavepointRedeployNonce *int64 `json:"savepointRedeployNonce,omitempty"`
	// +optional
	AutoscalerResetNonce *int64 `json:"autoscalerResetNonce,omitempty"`
}

// Job states and upgrade modes as the Flink CRDs spell them.
const (
	JobStateRunning      = "running"
	JobStateSuspended    = "suspended"
	UpgradeModeSavepoint = "savepoint"
	UpgradeModeLastState = "last-state"
	UpgradeModeStateless = "stateless"
)

// BlueGreenState is the FLIP-503 state of a FlinkBlueGreenDeployment.
// +kubebuilder:validation:Enum=INITIALIZING_BLUE;SAVEPOINTING_BLUE;SAVEPOINTING_GREEN;TRANSITIONING_TO_BLUE;TRANSITIONING_TO_GREEN;ACTIVE_BLUE;ACTIVE_GREEN
type BlueGreenState string

// The FLIP-503 states.
const (
	InitializingBlue     BlueGreenState = "INITIALIZING_BLUE"
	SavepointingBlue     BlueGreenState = "SAVEPOINTING_BLUE"
	SavepointingGreen    BlueGreenState = "SAVEPOINTING_GREEN"
	TransitioningToBlue  BlueGreenState = "TRANSITIONING_TO_BLUE"
	TransitioningToGreen BlueGreenState = "TRANSITIONING_TO_GREEN"
	ActiveBlue           BlueGreenState = "ACTIVE_BLUE"
	ActiveGreen          BlueGreenState = "ACTIVE_GREEN"
)

// JobState is the parent's summary of the job.
// +kubebuilder:validation:Enum=RECONCILING;RUNNING;FAILING;SUSPENDED
type JobState string

// Parent job states.
const (
	JobReconciling JobState = "RECONCILING"
	JobRunning     JobState = "RUNNING"
	JobFailing     JobState = "FAILING"
	JobSuspended   JobState = "SUSPENDED"
)

// FlinkBlueGreenDeploymentStatus is the observed state.
type FlinkBlueGreenDeploymentStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	BlueGreenState BlueGreenState `json:"blueGreenState,omitempty"`
	// +optional
	JobStatus JobStatus `json:"jobStatus,omitempty"`
	// ActiveDeployment is the name of the active child FlinkDeployment.
	// +optional
	ActiveDeployment string `json:"activeDeployment,omitempty"`
	// ActiveRevision is the Git revision the running job was deployed from.
	// +optional
	ActiveRevision string `json:"activeRevision,omitempty"`
	// TargetRevision is the Git revision being rolled out.
	// +optional
	TargetRevision string `json:"targetRevision,omitempty"`
	// LiveRevisions are the last revisions that went live (cut over,
	// patched in place or suspended as asked), oldest first: their
	// rollout commit status is success whatever follows.
	// +optional
	LiveRevisions []string `json:"liveRevisions,omitempty"`
	// LastReconciledSpec is the JSON of the last spec acted upon.
	// +optional
	LastReconciledSpec string `json:"lastReconciledSpec,omitempty"`
	// +optional
	LastReconciledTimestamp *metav1.Time `json:"lastReconciledTimestamp,omitempty"`
	// AbortTimestamp is the deadline for the new child to become ready.
	// +optional
	AbortTimestamp *metav1.Time `json:"abortTimestamp,omitempty"`
	// DeploymentReadyTimestamp is when the new child first became ready.
	// +optional
	DeploymentReadyTimestamp *metav1.Time `json:"deploymentReadyTimestamp,omitempty"`
	// TransitionStartTime is when the transition in progress started.
	// +optional
	TransitionStartTime *metav1.Time `json:"transitionStartTime,omitempty"`
	// Savepoint is the savepoint of the transition in progress or last done.
	// +optional
	Savepoint *SavepointStatus `json:"savepoint,omitempty"`
	// Error explains FAILING.
	// +optional
	Error string `json:"error,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LastHandledPromoteAt acknowledges promote-requested-at.
	// +optional
	LastHandledPromoteAt string `json:"lastHandledPromoteAt,omitempty"`
	// LastHandledAbortAt acknowledges abort-requested-at.
	// +optional
	LastHandledAbortAt string `json:"lastHandledAbortAt,omitempty"`
	// LastHandledRetryAt acknowledges retry-requested-at.
	// +optional
	LastHandledRetryAt string `json:"lastHandledRetryAt,omitempty"`
	// CommitStatuses are the commit statuses acknowledged by the forge.
	// +optional
	CommitStatuses []CommitStatusRecord `json:"commitStatuses,omitempty"`
	// ActiveJobState is the job state of the active FlinkDeployment as the
	// Flink operator reports it (RUNNING, RECONCILING, FAILED, ...): the
	// job that runs, whatever the outcome of the last rollout.
	// +optional
	ActiveJobState string `json:"activeJobState,omitempty"`
	// History holds the last rollouts, oldest first (at most
	// MaxHistory): one entry per rollout, updated as it progresses.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	History []RolloutRecord `json:"history,omitempty"`
}

// MaxHistory is how many rollouts status.history keeps.
const MaxHistory = 10

// RolloutKind is how a rollout changes the job.
// +kubebuilder:validation:Enum=First;BlueGreen;InPlace
type RolloutKind string

// Rollout kinds.
const (
	// RolloutFirst starts the first FlinkDeployment.
	RolloutFirst RolloutKind = "First"
	// RolloutBlueGreen starts the other colour (from a savepoint of the
	// running job when stateful) and deletes the old one.
	RolloutBlueGreen RolloutKind = "BlueGreen"
	// RolloutInPlace patches the running colour (suspend, resume, scale).
	RolloutInPlace RolloutKind = "InPlace"
)

// RolloutOutcome is how a rollout ended.
// +kubebuilder:validation:Enum=InProgress;Succeeded;Aborted;Failed;Superseded
type RolloutOutcome string

// Rollout outcomes.
const (
	RolloutInProgress RolloutOutcome = "InProgress"
	RolloutSucceeded  RolloutOutcome = "Succeeded"
	// RolloutAborted: the new job was not ready before the abort
	// deadline, or an abort was requested; the old one kept running.
	RolloutAborted RolloutOutcome = "Aborted"
	RolloutFailed  RolloutOutcome = "Failed"
	// RolloutSuperseded: a later commit changed the spec before the
	// rollout ended, and its own rollout took over. Nothing failed.
	RolloutSuperseded RolloutOutcome = "Superseded"
)

// RolloutRecord is one rollout in status.history.
type RolloutRecord struct {
	// Revision is the Git revision rolled out.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Kind is First, BlueGreen or InPlace.
	Kind RolloutKind `json:"kind"`
	// From is the FlinkDeployment that ran before (empty for First).
	// +optional
	From string `json:"from,omitempty"`
	// To is the FlinkDeployment that runs the new spec.
	To string `json:"to"`
	// SavepointName is the FlinkStateSnapshot taken of From's job.
	// +optional
	SavepointName string `json:"savepointName,omitempty"`
	// SavepointPath is that savepoint's path once completed.
	// +optional
	SavepointPath string `json:"savepointPath,omitempty"`
	// RestoredFrom is the savepoint path To's job started from: the
	// initialSavepointPath To was applied with (the savepoint of From's
	// job in a stateful transition, spec.template's otherwise). Empty when
	// it started without one, and for an in-place change, whose job the
	// Flink operator restores from its own state.
	// +optional
	RestoredFrom string `json:"restoredFrom,omitempty"`
	// Record is the state record (a FlinkStateSnapshot kept when an
	// earlier FlinkBlueGreenDeployment of this name, or of the one
	// bggitops.dev/restore-from names, was deleted) RestoredFrom comes
	// from: First only.
	// +optional
	Record string `json:"record,omitempty"`
	// StartedEmpty: the first job started with empty state because
	// bggitops.dev/initial-state: empty says so.
	// +optional
	StartedEmpty bool `json:"startedEmpty,omitempty"`
	// StartedAt is when the rollout started.
	StartedAt metav1.Time `json:"startedAt"`
	// FinishedAt is when it ended; unset while in progress.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// Outcome is InProgress, Succeeded, Aborted or Failed.
	Outcome RolloutOutcome `json:"outcome"`
	// Reason says why it aborted or failed.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// JobStatus is the parent's summary of its job.
type JobStatus struct {
	// +optional
	State JobState `json:"state,omitempty"`
}

// SavepointStatus names a FlinkStateSnapshot and its outcome.
type SavepointStatus struct {
	// Name of the FlinkStateSnapshot.
	Name string `json:"name"`
	// Path of the completed savepoint.
	// +optional
	Path string `json:"path,omitempty"`
	// TriggerTimestamp is when the snapshot was requested.
	// +optional
	TriggerTimestamp *metav1.Time `json:"triggerTimestamp,omitempty"`
	// UID is the metadata.uid the API server gave the FlinkStateSnapshot
	// when bg-gitops created it. A transition uses the snapshot named
	// above only while its uid is this one: one of that name created by
	// anyone else (first, or after bg-gitops's was deleted) has another
	// uid, and the rollout fails with SnapshotNotOurs. Empty until
	// bg-gitops's own create has been recorded.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fbgd,categories=bggitops
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.blueGreenState`
// +kubebuilder:printcolumn:name="Job",type=string,JSONPath=`.status.activeJobState`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.activeDeployment`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.activeRevision`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.targetRevision`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// FlinkBlueGreenDeployment runs a Flink job as blue and green FlinkDeployment
// children and rolls spec changes out with a savepoint handoff.
type FlinkBlueGreenDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec FlinkBlueGreenDeploymentSpec `json:"spec"`
	// +optional
	Status FlinkBlueGreenDeploymentStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// FlinkBlueGreenDeploymentList is a list of FlinkBlueGreenDeployment objects.
type FlinkBlueGreenDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FlinkBlueGreenDeployment `json:"items"`
}

func init() {
	SchemeBuilder.Register(&FlinkBlueGreenDeployment{}, &FlinkBlueGreenDeploymentList{})
}

// PromotionMode returns the promotion mode, defaulted to Automatic.
func (in *FlinkBlueGreenDeployment) PromotionMode() string { return in.Spec.PromotionMode() }

// PromotionMode is spec.promotion.mode, Automatic when unset.
func (in *FlinkBlueGreenDeploymentSpec) PromotionMode() string {
	if in.Promotion == nil || in.Promotion.Mode == "" {
		return PromotionAutomatic
	}
	return in.Promotion.Mode
}

// GetConditions returns the status conditions.
func (in *FlinkBlueGreenDeployment) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *FlinkBlueGreenDeployment) SetConditions(c []metav1.Condition) {
	in.Status.Conditions = c
}
