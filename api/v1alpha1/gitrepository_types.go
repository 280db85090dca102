/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_types.go: the GitRepository kind — spec, status (artifact,
// inventory, worker failures, commit status records), the defaults and
// bounds of interval and timeout, and the getters that apply them.

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GitRepositoryKind is the kind of GitRepository objects.
const GitRepositoryKind = "GitRepository"

// Defaults of GitRepository fields that need code (see the getters below).
const (
	DefaultInterval = time.Minute
	DefaultTimeout  = 60 * time.Second
	DefaultBranch   = "main"
	DefaultPath     = "./"
)

// Bounds of interval (and @every schedules) and timeout: one controller
// polls every tenant's repositories with a few workers, so no object may
// poll in a hot loop or hold a worker for long. The CRD enforces them
// (the XValidation markers below repeat these values); the getters clamp
// objects stored before the CRD did. A push webhook, not a short
// interval, is the way to fast updates.
const (
	MinInterval = 10 * time.Second
	MinTimeout  = time.Second
	MaxTimeout  = 5 * time.Minute
)

// GitRepositorySpec says which repository, ref and kustomize path to fetch,
// render and apply, and how.
// +kubebuilder:validation:XValidation:rule="!(has(self.interval) && has(self.schedule))",message="set interval or schedule, not both"
type GitRepositorySpec struct {
	// URL of the repository: https://, http://, ssh:// or file://.
	// +required
	// +kubebuilder:validation:Pattern=`^(https?|ssh|file)://.+$`
	URL string `json:"url"`

	// Ref to check out; defaults to the branch main.
	// +optional
	// +kubebuilder:default={branch: "main"}
	Ref *GitRepositoryRef `json:"ref,omitempty"`

	// Interval between polls (Go duration, default 1m, at least 10s).
	// Mutually exclusive with schedule.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s')",message="interval must be at least 10s (a push webhook gives faster updates)"
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Schedule polls on a cron schedule (robfig/cron syntax; a CRON_TZ=
	// prefix selects a time zone; an @every descriptor must be at least
	// 10s). Mutually exclusive with interval.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.contains('@every') || duration(self.substring(self.indexOf('@every') + 6).trim()) >= duration('10s')",message="an @every schedule must be at least 10s (a push webhook gives faster updates)"
	Schedule string `json:"schedule,omitempty"`

	// Timeout bounds the git operations of one fetch (default 60s, between
	// 1s and 5m).
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('5m')",message="timeout must be between 1s and 5m"
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// SecretRef names a Secret in the same namespace with username and
	// password, or bearerToken, or identity and known_hosts (SSH); an
	// optional caFile key holds a CA bundle for https.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`

	// Path of the kustomize directory inside the repository (default ./).
	// +optional
	// +kubebuilder:default="./"
	Path string `json:"path,omitempty"`

	// TargetNamespace sets the namespace of every namespaced object applied.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// Prune deletes objects that were applied before and are no longer in
	// Git (default true).
	// +optional
	// +kubebuilder:default=true
	Prune *bool `json:"prune,omitempty"`

	// ServiceAccountName in this namespace that apply and prune impersonate.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// Suspend stops fetching and applying; running jobs are not touched.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// CommitStatus writes sync and rollout outcomes back to the commit.
	// +optional
	CommitStatus *CommitStatusSpec `json:"commitStatus,omitempty"`

	// Webhook configures the push webhook receiver for this object.
	// +optional
	Webhook *WebhookSpec `json:"webhook,omitempty"`

	// RolloutWindows, when set, restrict the start of new blue/green
	// transitions of the FlinkBlueGreenDeployments applied from this
	// repository to these windows.
	// +optional
	RolloutWindows []RolloutWindow `json:"rolloutWindows,omitempty"`

	// PullRequests, when set, plans the open pull (merge) requests into
	// spec.ref.branch: each head is fetched, rendered, dry-run as the
	// applying identity and compared with the live objects, and the plan is
	// posted on the head as the commit status
	// bg-gitops/plan/<namespace>/<name> (and one comment, edited in place,
	// where the token allows). Nothing is ever applied from a pull request.
	// +optional
	PullRequests *PullRequestsSpec `json:"pullRequests,omitempty"`
}

// GitRepositoryRef selects what to check out. Exactly one field is set.
// +kubebuilder:validation:XValidation:rule="[has(self.branch), has(self.tag), has(self.semver), has(self.commit), has(self.name)].filter(x, x).size() == 1",message="set exactly one of branch, tag, semver, commit, name"
type GitRepositoryRef struct {
	// Branch to follow.
	// +optional
	// +kubebuilder:validation:MinLength=1
	Branch string `json:"branch,omitempty"`
	// Tag to check out.
	// +optional
	// +kubebuilder:validation:MinLength=1
	Tag string `json:"tag,omitempty"`
	// SemVer range; the highest matching tag is checked out.
	// +optional
	// +kubebuilder:validation:MinLength=1
	SemVer string `json:"semver,omitempty"`
	// Commit is a full 40-character SHA-1.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{40}$`
	Commit string `json:"commit,omitempty"`
	// Name is any ref, e.g. refs/pull/7/head.
	// +optional
	// +kubebuilder:validation:Pattern=`^refs/.+$`
	Name string `json:"name,omitempty"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// Name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// CommitStatusSpec says where commit statuses are written.
type CommitStatusSpec struct {
	// Provider is the forge: gitea, github or gitlab.
	// +required
	// +kubebuilder:validation:Enum=gitea;github;gitlab
	Provider string `json:"provider"`
	// Address is the forge's root URL; the provider adds its API path.
	// Empty for github means https://api.github.com.
	// +optional
	// +kubebuilder:validation:Pattern=`^https?://.+$`
	Address string `json:"address,omitempty"`
	// Repository is owner/name, or a GitLab project id.
	// +required
	// +kubebuilder:validation:MinLength=1
	Repository string `json:"repository"`
	// SecretRef names a Secret with the API token under the key token.
	// +required
	SecretRef LocalObjectReference `json:"secretRef"`
}

// PullRequestsSpec says which pull requests get a plan.
type PullRequestsSpec struct {
	// RefPattern lists the heads to plan from the repository's refs instead
	// of the forge's API: one '*' stands for the pull request's number, as
	// in refs/pull/*/head (GitHub, Gitea) or refs/merge-requests/*/head
	// (GitLab). Empty: the open pull requests into spec.ref.branch are
	// listed through spec.commitStatus (its provider, address and token),
	// which is then required. Labels and authors are known only from the
	// forge's listing.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^refs/[^*]*\*[^*]*$`
	RefPattern string `json:"refPattern,omitempty"`
	// Max is how many open pull requests are planned at most, the most
	// recently updated first (default 20).
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Max int32 `json:"max,omitempty"`
	// SkipLabels: a pull request carrying any of these labels is not
	// planned.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	SkipLabels []string `json:"skipLabels,omitempty"`
	// SkipAuthors: a pull request opened by any of these forge users is not
	// planned.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	SkipAuthors []string `json:"skipAuthors,omitempty"`
}

// Outcomes of a PullRequestPlan.
const (
	PlanPending   = "Pending"
	PlanSucceeded = "Succeeded"
	PlanFailed    = "Failed"
)

// PullRequestPlan is the plan of one open pull request's head.
type PullRequestPlan struct {
	// Number of the pull (merge) request.
	Number int64 `json:"number"`
	// HeadSHA is the commit planned.
	HeadSHA string `json:"headSHA"`
	// Outcome is Pending, Succeeded or Failed.
	// +kubebuilder:validation:Enum=Pending;Succeeded;Failed
	Outcome string `json:"outcome"`
	// Summary is the plan's one-line summary (the commit status's
	// description).
	// +optional
	Summary string `json:"summary,omitempty"`
	// CommentID is the forge's id of the plan comment, edited in place on
	// each new head; 0 when none was written.
	// +optional
	CommentID int64 `json:"commentID,omitempty"`
	// CommentAuthorID is the forge's id of the user who wrote the plan
	// comment (learned when it was created): a token that may not read
	// its own user edits only a comment by this author.
	// +optional
	CommentAuthorID int64 `json:"commentAuthorID,omitempty"`
	// CommentSHA is the head the plan comment was last written for; a
	// comment refused is written again at a later pass, not re-planned.
	// +optional
	CommentSHA string `json:"commentSHA,omitempty"`
	// StatusSHA is the head whose verdict the forge shows; a verdict
	// refused is posted again at a later pass, not re-planned.
	// +optional
	StatusSHA string `json:"statusSHA,omitempty"`
	// ObservedGeneration is the GitRepository's generation the head was
	// planned at: a spec change plans a Failed head again.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Time is when the head was planned.
	Time metav1.Time `json:"time"`
}

// WebhookSpec configures push webhooks.
type WebhookSpec struct {
	// SecretRef names a Secret whose key token is the webhook's shared secret.
	// +required
	SecretRef LocalObjectReference `json:"secretRef"`
}

// RolloutWindow is a recurring time window in which transitions may start.
type RolloutWindow struct {
	// Schedule is a cron expression for the start of the window.
	// +required
	// +kubebuilder:validation:MinLength=1
	Schedule string `json:"schedule"`
	// Duration of the window (Go duration).
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	Duration metav1.Duration `json:"duration"`
	// TimeZone is an IANA time zone name (default UTC).
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// GitRepositoryStatus is the observed state of a GitRepository.
type GitRepositoryStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Reconciling, Stalled, FetchFailed, BuildFailed,
	// ApplyFailed, CommitStatusFailed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Artifact is the last fetched revision.
	// +optional
	Artifact *Artifact `json:"artifact,omitempty"`
	// LastAppliedRevision is the revision last applied successfully.
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`
	// AppliedRevisions are the last revisions applied successfully, oldest
	// first (at most 8): their sync commit status is success, even when
	// the forge was down until a newer revision replaced them.
	// +optional
	AppliedRevisions []string `json:"appliedRevisions,omitempty"`
	// LastAttemptedRevision is the revision last tried.
	// +optional
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`
	// Inventory lists the objects applied, for pruning.
	// +optional
	Inventory *Inventory `json:"inventory,omitempty"`
	// WebhookPath is the receiver path of push webhooks for this object.
	// +optional
	WebhookPath string `json:"webhookPath,omitempty"`
	// WebhookURL is the URL to give the forge as the push webhook's
	// target: the controller's --receiver-external-url followed by
	// webhookPath. Empty without that flag or without spec.webhook.
	// +optional
	WebhookURL string `json:"webhookURL,omitempty"`
	// LastHandledReconcileAt is the last reconcile-requested-at handled.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
	// CommitStatuses are the commit statuses acknowledged by the forge.
	// +optional
	CommitStatuses []CommitStatusRecord `json:"commitStatuses,omitempty"`
	// Suspended is true while spec.suspend or the suspend annotation stops
	// fetching and applying.
	// +optional
	Suspended bool `json:"suspended"`
	// LastWorkerFailure is the last fetch or build whose worker process
	// died: it hit its memory, CPU, stack or time limit, or the Go runtime
	// ended it. The controller, a restarted one included, does not run it
	// again until the revision, path or target namespace changes, or a
	// reconcile is requested (bg-gitops reconcile gitrepository).
	// +optional
	LastWorkerFailure *WorkerFailure `json:"lastWorkerFailure,omitempty"`
	// PullRequests are the plans of the open pull requests
	// (spec.pullRequests), by number; a closed pull request is dropped.
	// +optional
	// +listType=map
	// +listMapKey=number
	// +kubebuilder:validation:MaxItems=100
	PullRequests []PullRequestPlan `json:"pullRequests,omitempty"`
	// LastHandledPlanAt is the last plan-requested-at handled: the pull
	// requests were listed, and their new heads planned, after it was set.
	// +optional
	LastHandledPlanAt string `json:"lastHandledPlanAt,omitempty"`
}

// Stages of a WorkerFailure.
const (
	WorkerStageFetch = "Fetch"
	WorkerStageBuild = "Build"
)

// WorkerFailure is a fetch or build whose worker process died.
type WorkerFailure struct {
	// Stage is Fetch or Build.
	// +kubebuilder:validation:Enum=Fetch;Build
	Stage string `json:"stage"`
	// Revision is the revision it ran for (<ref>@sha1:<hex>); empty for a
	// fetch that died before its ref was resolved.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Path and TargetNamespace are the build's (spec.path and
	// spec.targetNamespace when it ran).
	// +optional
	Path string `json:"path,omitempty"`
	// +optional
	TargetNamespace string `json:"targetNamespace,omitempty"`
	// Message says why it died: the limit and the measured peak.
	Message string `json:"message"`
	// Time is when it died.
	Time metav1.Time `json:"time"`
}

// Artifact is a fetched revision.
type Artifact struct {
	// Revision is <ref>@sha1:<hex>.
	Revision string `json:"revision"`
	// LastUpdateTime is when the revision was fetched.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
}

// Inventory is the set of objects applied from Git.
type Inventory struct {
	// Entries are the applied objects.
	// +optional
	Entries []ObjectRef `json:"entries,omitempty"`
}

// ObjectRef identifies an applied object.
type ObjectRef struct {
	// ID is <namespace>_<name>_<group>_<kind>, as in Flux's inventory.
	ID string `json:"id"`
	// Version is the API version the object was applied with.
	Version string `json:"v"`
}

// CommitStatusRecord is a commit status the forge has acknowledged.
type CommitStatusRecord struct {
	// Context of the status, e.g. bg-gitops/sync/<namespace>/<name>.
	Context string `json:"context"`
	// Revision (<ref>@sha1:<hex>) the status was posted to.
	Revision string `json:"revision"`
	// State: pending, success or failure.
	State string `json:"state"`
	// Description posted with the status.
	// +optional
	Description string `json:"description,omitempty"`
	// Pending counts the pending statuses acknowledged for this context
	// and revision: they stop at a bound (README, "Commit statuses").
	// +optional
	Pending int32 `json:"pending,omitempty"`
	// Unconfirmed: the post of this status got no answer (a timeout, a
	// lost connection), so the forge may or may not have it. It is looked
	// for and posted again until the forge confirms it, and a pending one
	// still gets its verdict.
	// +optional
	Unconfirmed bool `json:"unconfirmed,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bggr,categories=bggitops
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.artifact.revision`
// +kubebuilder:printcolumn:name="Suspended",type=boolean,JSONPath=`.status.suspended`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// GitRepository fetches one repository and applies one kustomize path of it.
type GitRepository struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec GitRepositorySpec `json:"spec"`
	// +optional
	Status GitRepositoryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// GitRepositoryList is a list of GitRepository objects.
type GitRepositoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GitRepository `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GitRepository{}, &GitRepositoryList{})
}

// GetInterval returns the poll interval, defaulted and at least
// MinInterval.
func (in *GitRepository) GetInterval() time.Duration {
	if in.Spec.Interval != nil && in.Spec.Interval.Duration > 0 {
		return max(in.Spec.Interval.Duration, MinInterval)
	}
	return DefaultInterval
}

// GetTimeout returns the git operation timeout, defaulted and within
// [MinTimeout, MaxTimeout].
func (in *GitRepository) GetTimeout() time.Duration {
	if in.Spec.Timeout != nil && in.Spec.Timeout.Duration > 0 {
		return min(max(in.Spec.Timeout.Duration, MinTimeout), MaxTimeout)
	}
	return DefaultTimeout
}

// GetRef returns the ref, defaulted to the branch main.
func (in *GitRepository) GetRef() GitRepositoryRef {
	if in.Spec.Ref == nil || *in.Spec.Ref == (GitRepositoryRef{}) {
		return GitRepositoryRef{Branch: DefaultBranch}
	}
	return *in.Spec.Ref
}

// GetPath returns the kustomize path, defaulted.
func (in *GitRepository) GetPath() string {
	if in.Spec.Path == "" {
		return DefaultPath
	}
	return in.Spec.Path
}

// PruneEnabled reports whether pruning is on (default true).
func (in *GitRepository) PruneEnabled() bool {
	return in.Spec.Prune == nil || *in.Spec.Prune
}

// IsSuspended reports whether spec.suspend or the suspend annotation is set.
func (in *GitRepository) IsSuspended() bool {
	return in.Spec.Suspend || in.GetAnnotations()[SuspendAnnotation] == "true"
}

// GetConditions returns the status conditions.
func (in *GitRepository) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions.
func (in *GitRepository) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
