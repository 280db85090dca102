/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pullrequests.go: PullRequestReconciler, the controller that plans the open
// pull requests of a GitRepository with spec.pullRequests — one pass lists
// the heads, plans each new head SHA, posts the plans and records them in
// status.pullRequests — beside the sync, never in its way.

package reconcile

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/redact"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/worker"
)

// PullRequestReconciler plans the open pull requests of GitRepositories
// with spec.pullRequests. It is a controller of its own, so that a slow
// forge or a long plan never delays a sync: it writes only
// status.pullRequests and status.lastHandledPlanAt, never a condition of
// the sync, and fetches each head into a cache directory of its own
// (pullsKey), never the sync's checkout.
type PullRequestReconciler struct {
	// Client reads GitRepositories (cache) and Secrets (noted in Redact).
	Client client.Client
	// Reader reads the live objects a plan compares the head with.
	Reader   client.Reader
	Recorder events.EventRecorder
	Redact   *redact.Registry
	// Applier gives the impersonating client of the apply, which dry-runs
	// the head as the applying identity.
	Applier *apply.Applier
	// Renderer, Worker, Cache and the git options are the sync's: the
	// head of a pull request gets the same sandbox and limits.
	Renderer          *Renderer
	Worker            *worker.Pool
	Cache             *source.Cache
	GitLimits         source.Limits
	AllowFileURLs     bool
	AllowInsecureHTTP bool
	Tenancy           Tenancy
	// Commit is the commit status reporter of the sync: its forge token,
	// fence, per-namespace budget and rate limits hold for plans too.
	Commit *CommitStatusReporter
	// Plan plans a head (prplan.Plan when nil).
	Plan func(context.Context, prplan.Input) (*prplan.Result, error)
	// NewReviews makes the forge's pull-request API (status.NewReviews
	// when nil).
	NewReviews func(v1alpha1.CommitStatusSpec, string, status.Options) (status.Reviews, error)
	Now        func() time.Time
	// Slots are the sync's per-namespace bound: a tenant's heads take its
	// namespace's slots, never the other tenants' (nil: no bound).
	Slots *namespaceSlots

	mem prMemory
}

// pullsSuffix names the cache directory of a GitRepository's pull request
// heads: "_" is in no Kubernetes name, so it is nobody's sync directory.
const pullsSuffix = "_pulls"

// pullsKey is the key of the heads' cache directory and of their render in
// the Redact registry, next to gr's own.
func pullsKey(id types.NamespacedName) types.NamespacedName {
	return types.NamespacedName{Namespace: id.Namespace, Name: id.Name + pullsSuffix}
}

// prRun is the state of one pass.
type prRun struct {
	gr, base *v1alpha1.GitRepository
	forge    *planForge // nil without spec.commitStatus
	dir      string
	// retry: a head was not planned for a passing reason, or the forge
	// refused its verdict or comment; the pass runs again after a backoff
	// (prMemory.backoff), not after a whole interval.
	retry bool
}

// Reconcile implements reconcile.Reconciler.
func (r *PullRequestReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	gr := &v1alpha1.GitRepository{}
	if err := r.Client.Get(ctx, req.NamespacedName, gr); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	run := &prRun{gr: gr, base: gr.DeepCopy()}
	if !gr.DeletionTimestamp.IsZero() || gr.Spec.PullRequests == nil || gr.IsSuspended() {
		return ctrl.Result{}, r.idle(ctx, run)
	}
	release, ok := r.Slots.tryAcquire(req.NamespacedName)
	if !ok {
		logf.FromContext(ctx).V(1).Info("other GitRepositories of the namespace hold its workers", "requeueAfter", busyRetry)
		return ctrl.Result{RequeueAfter: busyRetry}, nil
	}
	defer release()
	err := r.pass(ctx, run)
	if perr := r.patchStatus(ctx, run); perr != nil {
		return ctrl.Result{}, perr
	}
	if err != nil {
		return ctrl.Result{}, err // the rate limiter backs off
	}
	if run.retry {
		return ctrl.Result{RequeueAfter: r.mem.backoff(req.NamespacedName, gr.GetInterval())}, nil
	}
	r.mem.reset(req.NamespacedName)
	return ctrl.Result{RequeueAfter: gr.GetInterval()}, nil
}

// idle drops the plans of a GitRepository that plans nothing (any more),
// and the heads' checkout with them; their comments stay.
func (r *PullRequestReconciler) idle(ctx context.Context, run *prRun) error {
	if run.gr.Spec.PullRequests == nil || !run.gr.DeletionTimestamp.IsZero() {
		r.forget(client.ObjectKeyFromObject(run.gr))
	}
	if run.gr.Spec.PullRequests == nil {
		run.gr.Status.PullRequests = nil
	}
	return r.patchStatus(ctx, run)
}

// forget drops the heads' checkout and the record of their renders'
// Secrets, of a GitRepository deleted or that plans nothing any more.
func (r *PullRequestReconciler) forget(id types.NamespacedName) {
	k := pullsKey(id)
	r.Cache.Forget(k.Namespace, k.Name)
	r.Redact.Forget(k)
	r.mem.forget(id)
}

// pass lists the heads and plans the new ones. An error of the listing is
// returned (backoff) after a Warning event; the plans of one head fail
// only that head.
func (r *PullRequestReconciler) pass(ctx context.Context, run *prRun) error {
	gr := run.gr
	requested, isRequest := gr.Annotations[v1alpha1.PlanRequestedAtAnnotation]
	forge, err := r.forge(ctx, gr)
	if err != nil {
		return r.warn(gr, "PullRequestForgeFailed", err)
	}
	run.forge = forge
	heads, err := r.heads(ctx, gr, forge)
	if misconfigured(err) {
		return reconcile.TerminalError(r.warn(gr, "PullRequestsMisconfigured", err))
	}
	if err != nil {
		return r.warn(gr, "PullRequestListFailed", err)
	}
	// Listed: the request is handled by this pass.
	if isRequest {
		gr.Status.LastHandledPlanAt = requested
	}
	heads = selectHeads(r.validHeads(gr, heads), gr.Spec.PullRequests)
	plans := listedPlans(gr.Status.PullRequests, heads)
	gr.Status.PullRequests = plans
	k := pullsKey(client.ObjectKeyFromObject(gr))
	dir, release := r.Cache.Acquire(k.Namespace, k.Name)
	defer release()
	run.dir = dir
	for _, pr := range heads {
		prev, ok := findPlan(plans, pr.Number)
		var plan v1alpha1.PullRequestPlan
		if ok && prev.HeadSHA == pr.HeadSHA && !replan(gr, prev, requested) {
			plan = r.deliver(ctx, run, pr, prev)
		} else {
			plan = r.planHead(ctx, run, pr, prev)
		}
		plans = putPlan(plans, plan)
		gr.Status.PullRequests = plans
		// Saved head by head: a long pass loses nothing to a restart.
		if err := r.patchStatus(ctx, run); err != nil {
			return err
		}
	}
	return nil
}

// replan: a head already planned at its SHA is planned again when its
// plan is Pending (a passing failure), or Failed and the spec changed
// since (generation) or a plan request came after the plan.
func replan(gr *v1alpha1.GitRepository, prev v1alpha1.PullRequestPlan, requested string) bool {
	switch prev.Outcome {
	case v1alpha1.PlanPending:
		return true
	case v1alpha1.PlanFailed:
		return prev.ObservedGeneration != gr.Generation || requestedAfter(requested, prev.Time.Time)
	}
	return false
}

// requestedAfter: the plan request at (RFC 3339, as the webhook and the
// CLI write it) was made after planned. The plan's time is kept to the
// second, so a request within that second is not after it.
func requestedAfter(at string, planned time.Time) bool {
	t, err := time.Parse(time.RFC3339Nano, at)
	return err == nil && t.Truncate(time.Second).After(planned)
}

// warn records err as a Warning event on gr (never a condition: those are
// the sync's) and returns it, scrubbed.
func (r *PullRequestReconciler) warn(gr *v1alpha1.GitRepository, reason string, err error) error {
	err = r.scrubber(gr).ScrubError(err)
	r.event(gr, corev1.EventTypeWarning, reason, err.Error())
	return err
}

func (r *PullRequestReconciler) event(gr *v1alpha1.GitRepository, typ, reason, msg string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(gr, nil, typ, reason, "PlanPullRequests", "%s", msg)
	}
}

// scrubber scrubs the values of gr's renders (its sync's and its heads')
// and every Secret known in its namespace.
func (r *PullRequestReconciler) scrubber(gr *v1alpha1.GitRepository) redact.Scrubber {
	id := client.ObjectKeyFromObject(gr)
	return r.Redact.ForSource(id).And(r.Redact.ForSource(pullsKey(id)))
}

// maxRebases bounds the conflicts one save rebases over.
const maxRebases = 5

// patchStatus writes status.pullRequests and status.lastHandledPlanAt when
// they changed, over the resourceVersion read. The patch holds those
// fields only: the sync's fields are never written from here. On a
// conflict (the sync's status, a plan request, any write since) it reads
// the object afresh and puts the planner's own fields on it again, as
// the sync's rebaseStatus does: a plan posted is never lost to a write.
func (r *PullRequestReconciler) patchStatus(ctx context.Context, run *prRun) error {
	for attempt := 0; ; attempt++ {
		if planFieldsEqual(run.base.Status, run.gr.Status) {
			return nil
		}
		next := run.base.DeepCopy()
		next.Status.PullRequests = run.gr.Status.PullRequests
		next.Status.LastHandledPlanAt = run.gr.Status.LastHandledPlanAt
		lock := client.MergeFromWithOptions(run.base, client.MergeFromWithOptimisticLock{})
		err := r.Client.Status().Patch(ctx, next, lock)
		if err == nil {
			run.base = next
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == maxRebases {
			return fmt.Errorf("patch status: %w", err)
		}
		logf.FromContext(ctx).V(1).Info("GitRepository changed while its pull requests were planned; saving the plans over the change")
		fresh := &v1alpha1.GitRepository{}
		if err := r.reader().Get(ctx, client.ObjectKeyFromObject(run.gr), fresh); err != nil {
			return fmt.Errorf("patch status: read afresh: %w", err)
		}
		run.base = fresh
	}
}

// planFieldsEqual: the planner's own status fields are the same.
func planFieldsEqual(a, b v1alpha1.GitRepositoryStatus) bool {
	return a.LastHandledPlanAt == b.LastHandledPlanAt && equality.Semantic.DeepEqual(a.PullRequests, b.PullRequests)
}

// reader reads the object afresh (the cache may not hold the write that
// conflicted yet).
func (r *PullRequestReconciler) reader() client.Reader {
	if r.Reader != nil {
		return r.Reader
	}
	return r.Client
}

func (r *PullRequestReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *PullRequestReconciler) plan() func(context.Context, prplan.Input) (*prplan.Result, error) {
	if r.Plan != nil {
		return r.Plan
	}
	return prplan.Plan
}

func (r *PullRequestReconciler) newReviews() func(v1alpha1.CommitStatusSpec, string, status.Options) (status.Reviews, error) {
	if r.NewReviews != nil {
		return r.NewReviews
	}
	return status.NewReviews
}

func (r *PullRequestReconciler) httpClient() *http.Client {
	if r.Commit != nil && r.Commit.HTTP != nil {
		return r.Commit.HTTP
	}
	return &http.Client{Timeout: forgeTimeout}
}
