/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository.go: GitRepositoryReconciler — the steps of one reconcile,
// the one place its outcome is decided (finish), fetch, schedule, webhook
// path and the status write.

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/redact"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/worker"
)

// GitRepositoryReconciler fetches, renders and applies one GitRepository.
type GitRepositoryReconciler struct {
	// Redact records the Secret values this reconciler learns and scrubs
	// them from every message it publishes (conditions, events, logs,
	// commit statuses); one registry per controller (see package redact).
	Redact *redact.Registry
	// Applying records each set this reconciler applies (see Applying),
	// for the commit status reporter; nil records nothing.
	Applying *Applying
	// Client reads the GitRepository from the cache. A reconcile that
	// starts before the cache has seen the previous status write reads a
	// stale status: every status write carries the resourceVersion read
	// (a conflict requeues the reconcile, see staleRetry), and the commit
	// status reporter checks the read against the API server before it
	// posts anything (CommitStatusReporter.APIReader).
	Client   client.Client
	Recorder events.EventRecorder
	Applier  *apply.Applier
	Renderer *Renderer
	// Cache holds one git checkout per object, or per share, within a
	// byte budget.
	Cache *source.Cache
	// Shares, when set, lets the objects of a namespace that read the
	// same repository share its fetch (see gitrepository_share.go).
	Shares *shares
	// Worker, when set, runs every fetch in a worker process the OS
	// bounds, as Renderer.Worker runs the builds (see package worker).
	Worker *worker.Pool
	// Slots bound the reconciles of one namespace that run at once (nil:
	// no bound).
	Slots *namespaceSlots
	// GitLimits, AllowFileURLs and AllowInsecureHTTP apply to every fetch
	// (see source.Options).
	GitLimits         source.Limits
	AllowFileURLs     bool
	AllowInsecureHTTP bool
	// Tenancy decides the identity and the reach of every apply.
	Tenancy Tenancy
	// Commit writes sync commit statuses; nil disables them.
	Commit *CommitStatusReporter
	Now    func() time.Time

	// ReceiverExternalURL is where forges reach the webhook receiver
	// (--receiver-external-url); status.webhookURL is it plus the path.
	ReceiverExternalURL string

	// secrets remembers the Secrets read for secretTTL.
	secrets secretMemo
	// next is when each object's next reconcile is due.
	next nextRuns
}

// gitRun is the state of one reconcile, shared by its steps.
type gitRun struct {
	gr      *v1alpha1.GitRepository
	base    *v1alpha1.GitRepository
	fetched source.Result
	// dir is the object's cache directory, its share's or its own (named
	// cacheName in Cache), kept from eviction until leave; share is the
	// share's key ("" none).
	dir, cacheName, share string
	leave                 func()
	// auth and sec are the fetch's credentials, read once (authRead) with
	// their error.
	auth     *source.Auth
	sec      *corev1.Secret
	authErr  error
	authRead bool
	result   ctrl.Result
	// stalled: the outcome is stalled (finish); summarize keeps Stalled.
	stalled bool
	// rebased: a status write was put onto a newer version of the object,
	// which holds a change this run did not see (rebaseStatus).
	rebased bool
	// wrote are the resourceVersions the run read and its status writes
	// left, in order.
	wrote []string
}

// step is one stage of a GitRepository reconcile. A step that fails says
// how, by type (failed, stalledFailure, waitingFailure); finish reports it.
// Later steps do not run.
type step func(ctx context.Context, run *gitRun) error

// Reconcile implements reconcile.Reconciler.
func (r *GitRepositoryReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	gr := &v1alpha1.GitRepository{}
	if err := r.Client.Get(ctx, req.NamespacedName, gr); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !gr.DeletionTimestamp.IsZero() {
		forgetMetrics(v1alpha1.GitRepositoryKind, req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if wait, early := r.next.notYet(req.NamespacedName, gr.ResourceVersion, r.now()); early && !r.Shares.wokenSince(req.NamespacedName) {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	release, ok := r.Slots.acquire(client.ObjectKeyFromObject(gr))
	if !ok {
		logf.FromContext(ctx).V(1).Info("other GitRepositories of the namespace hold its workers", "requeueAfter", busyRetry)
		return ctrl.Result{RequeueAfter: busyRetry}, nil
	}
	defer release()
	run := &gitRun{gr: gr, base: gr.DeepCopy(), leave: func() {}, wrote: []string{gr.ResourceVersion}}
	if !gr.IsSuspended() {
		if !r.enterCache(ctx, run) {
			logf.FromContext(ctx).V(1).Info("another GitRepository of the same repository holds its fetch", "requeueAfter", busyRetry)
			return ctrl.Result{RequeueAfter: busyRetry}, nil
		}
		defer run.leave()
	} else {
		r.Shares.forget(req.NamespacedName) // woken for nothing, and keeps no checkout alive
	}
	asked := askedOf(gr)
	start := time.Now()
	res, err := r.finish(ctx, run, r.steps(ctx, run))
	observeRepository(run.gr, time.Since(start))
	if !run.rebased && asked.same(run.gr) {
		r.next.note(req.NamespacedName, append(run.wrote, run.gr.ResourceVersion), res, err, r.now())
	} else {
		r.next.forget(req.NamespacedName) // changed under it: the change's event runs
	}
	return res, err
}

// steps runs the steps in order up to the first failure.
func (r *GitRepositoryReconciler) steps(ctx context.Context, run *gitRun) error {
	if run.gr.IsSuspended() {
		return nil
	}
	for _, s := range []step{r.acknowledge, r.ensureWebhookPath, r.schedule, r.fetch, r.build} {
		if err := s(ctx, run); err != nil {
			return err
		}
	}
	return nil
}

// finish is the one place a GitRepository reconcile's outcome is decided
// (see kind): the failed step's condition, Stalled, the Warning event,
// the status write, the log line and the result.
func (r *GitRepositoryReconciler) finish(ctx context.Context, run *gitRun, err error) (ctrl.Result, error) {
	if stale(err) {
		return staleRead(ctx)
	}
	o := gitOutcome(r.Redact, run.gr, err, run.result.RequeueAfter)
	r.report(run, o)
	if err := r.summarize(ctx, run); err != nil {
		if stale(err) {
			return staleRead(ctx)
		}
		return o.unwritten(err)
	}
	o.log(ctx)
	return o.result()
}

// report sets the failed step's negative-polarity condition (and Stalled)
// and emits a Warning event when that condition changed.
func (r *GitRepositoryReconciler) report(run *gitRun, o outcome) {
	gr, now := run.gr, r.now()
	run.stalled = o.kind == kindStalled
	if o.cond == "" {
		return
	}
	msg := o.err.Error()
	changed := setCondition(&gr.Status.Conditions, gr.Generation, now, o.cond, metav1.ConditionTrue, o.reason, msg)
	if run.stalled {
		setCondition(&gr.Status.Conditions, gr.Generation, now, v1alpha1.StalledCondition, metav1.ConditionTrue, o.reason, msg)
	}
	if changed && o.warns() {
		r.event(gr, corev1.EventTypeWarning, o.reason, msg)
	}
}

// forget drops the checkout, cached render and metrics of a deleted
// GitRepository. Applied objects stay in the cluster: deleting a
// GitRepository must never take a running Flink job down with it.
func (r *GitRepositoryReconciler) forget(id types.NamespacedName) {
	forgetMetrics(v1alpha1.GitRepositoryKind, id)
	r.Renderer.Forget(id)
	r.Cache.Forget(id.Namespace, id.Name)
	r.Shares.forget(id)
	r.Applying.forget(id.String())
	r.next.forget(id)
}

func (r *GitRepositoryReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// acknowledge records the reconcile request being handled.
func (r *GitRepositoryReconciler) acknowledge(_ context.Context, run *gitRun) error {
	if v, ok := run.gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]; ok {
		run.gr.Status.LastHandledReconcileAt = v
	}
	return nil
}

// ensureWebhookPath publishes the receiver path derived from the webhook
// secret, name and namespace, and the URL to paste into the forge.
func (r *GitRepositoryReconciler) ensureWebhookPath(ctx context.Context, run *gitRun) error {
	gr := run.gr
	if gr.Spec.Webhook == nil {
		gr.Status.WebhookPath, gr.Status.WebhookURL = "", ""
		return nil
	}
	token, err := r.secretValue(ctx, run, gr.Spec.Webhook.SecretRef.Name, source.WebhookTokenKey)
	if err != nil {
		return failed(v1alpha1.FetchFailedCondition, "WebhookSecretError", err)
	}
	gr.Status.WebhookPath = source.WebhookPath(token, gr.Namespace, gr.Name)
	gr.Status.WebhookURL = webhookURL(r.ReceiverExternalURL, gr.Status.WebhookPath)
	return nil
}

// webhookURL joins the receiver's external URL (which may end in a path
// of a reverse proxy) and a webhook path; empty without an external URL.
func webhookURL(external, path string) string {
	if external == "" {
		return ""
	}
	return strings.TrimSuffix(external, "/") + path
}

// schedule validates interval/schedule and sets the next poll.
func (r *GitRepositoryReconciler) schedule(_ context.Context, run *gitRun) error {
	after, err := source.NextPoll(run.gr, r.now())
	if err != nil {
		return stalledFailure(v1alpha1.FetchFailedCondition, "InvalidSchedule", err)
	}
	run.result = ctrl.Result{RequeueAfter: after}
	return nil
}

func (r *GitRepositoryReconciler) fetch(ctx context.Context, run *gitRun) error {
	gr := run.gr
	auth, sec, err := run.auth, run.sec, run.authErr
	if !run.authRead {
		auth, sec, err = r.auth(ctx, run)
	}
	if err != nil {
		return failed(v1alpha1.FetchFailedCondition, "AuthenticationFailed", err)
	}
	last := ""
	if gr.Status.Artifact != nil {
		last = gr.Status.Artifact.Revision
	}
	res, err := r.fetchSource(ctx, run, source.Options{
		URL: gr.Spec.URL, Ref: gr.GetRef(), Auth: auth, Timeout: gr.GetTimeout(),
		Dir: run.dir, LastRevision: last, CheckedOut: r.Cache.CheckedOut(gr.Namespace, run.cacheName),
		Limits: r.GitLimits, AllowFileURLs: r.AllowFileURLs, AllowInsecureHTTP: r.AllowInsecureHTTP,
	}, sec)
	r.Cache.SetCheckedOut(gr.Namespace, run.cacheName, checkedOut(res, err))
	if err != nil {
		if gr.Spec.SecretRef != nil {
			r.secrets.drop(secretKey(gr, gr.Spec.SecretRef.Name)) // perhaps rotated
		}
		return failed(v1alpha1.FetchFailedCondition, fetchReason(err), err)
	}
	run.fetched = res
	r.fetched(run, res)
	clearCondition(&gr.Status.Conditions, v1alpha1.FetchFailedCondition)
	if last != res.Revision {
		// No event of its own: the apply's event (Applied, or the
		// Warning of a failed build or apply) names the revision.
		gr.Status.Artifact = &v1alpha1.Artifact{Revision: res.Revision, LastUpdateTime: metav1.NewTime(r.now())}
	}
	return nil
}

// checkedOut is the commit a fetch or poll left checked out in the
// cache directory, "" when it failed (it may have left anything).
func checkedOut(res source.Result, err error) string {
	if err != nil {
		return ""
	}
	return res.Commit
}

func fetchReason(err error) string {
	var se *source.Error
	if errors.As(err, &se) && se.Reason != "" {
		return se.Reason
	}
	return "FetchFailed"
}

// auth is the fetch's Auth and the Secret it was made from (nil, nil
// without a secretRef).
func (r *GitRepositoryReconciler) auth(ctx context.Context, run *gitRun) (*source.Auth, *corev1.Secret, error) {
	gr := run.gr
	if gr.Spec.SecretRef == nil {
		return nil, nil, nil
	}
	key := secretKey(gr, gr.Spec.SecretRef.Name)
	sec, err := r.readSecret(ctx, run, key)
	if err != nil {
		return nil, nil, fmt.Errorf("read Secret %s: %w", key.Name, err)
	}
	a, err := source.AuthFromSecret(sec.Data, gr.Spec.URL)
	if err != nil {
		return nil, nil, err
	}
	a.SecretName = sec.Name // named in authentication errors
	return a, sec, nil
}

func (r *GitRepositoryReconciler) secretValue(ctx context.Context, run *gitRun, name, key string) ([]byte, error) {
	sec, err := r.readSecret(ctx, run, secretKey(run.gr, name))
	if err != nil {
		return nil, fmt.Errorf("read Secret %s: %w", name, err)
	}
	return source.SecretValue(sec, key)
}

// event records msg as it is: a message is never a format string (a "%"
// in an error would garble it).
func (r *GitRepositoryReconciler) event(gr *v1alpha1.GitRepository, typ, reason, msg string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(gr, nil, typ, reason, "Reconcile", "%s", msg)
	}
}

// patchStatus writes the status when it changed, only over the
// resourceVersion it was read at: a conflict means the read was stale.
func (r *GitRepositoryReconciler) patchStatus(ctx context.Context, run *gitRun) error {
	if equality.Semantic.DeepEqual(run.base.Status, run.gr.Status) {
		return nil
	}
	lock := client.MergeFromWithOptions(run.base, client.MergeFromWithOptimisticLock{})
	err := r.Client.Status().Patch(ctx, run.gr, lock)
	if apierrors.IsConflict(err) && r.postedThisRun(run) {
		err = r.rebaseStatus(ctx, run)
	}
	if err != nil {
		return fmt.Errorf("patch status: %w", err)
	}
	run.base = run.gr.DeepCopy()
	run.wrote = append(run.wrote, run.gr.ResourceVersion)
	return nil
}

// postedThisRun: the forge acknowledged statuses in this reconcile, which
// only this status write records.
func (r *GitRepositoryReconciler) postedThisRun(run *gitRun) bool {
	return r.Commit != nil && r.Commit.APIReader != nil &&
		!equality.Semantic.DeepEqual(run.base.Status.CommitStatuses, run.gr.Status.CommitStatuses)
}

// rebaseStatus writes run's status onto the API server's latest version
// when nobody else changed the status since run read it (a conflict
// caused by metadata or spec, e.g. the receiver's reconcile request
// annotation): dropping it would forget statuses the forge already has,
// and a pending one would never get its verdict. Anything else stays a
// conflict, and the reconcile runs again.
func (r *GitRepositoryReconciler) rebaseStatus(ctx context.Context, run *gitRun) error {
	live := &v1alpha1.GitRepository{}
	if err := r.Commit.APIReader.Get(ctx, client.ObjectKeyFromObject(run.gr), live); err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(live.Status, run.base.Status) {
		return apierrors.NewConflict(v1alpha1.GroupVersion.WithResource("gitrepositories").GroupResource(), run.gr.Name,
			errors.New("the status changed since it was read"))
	}
	base := live.DeepCopy()
	live.Status = run.gr.Status
	if err := r.Client.Status().Patch(ctx, live, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	run.gr.ResourceVersion = live.ResourceVersion
	run.rebased = true
	return nil
}
