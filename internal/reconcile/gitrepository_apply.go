/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_apply.go: the build step of a GitRepository — render and
// apply the fetched revision — and the Ready summary with its commit
// statuses.

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/status"
)

// build renders the fetched revision and applies it. Re-applying an
// unchanged revision on every poll reverts drift without writing when
// nothing drifted.
func (r *GitRepositoryReconciler) build(ctx context.Context, run *gitRun) error {
	gr, rev := run.gr, run.fetched.Revision
	objs, err := r.render(ctx, run, rev)
	run.leave() // the apply reads no file of the checkout
	if err != nil {
		// The sync status follows LastAttemptedRevision: without this the
		// failure would be posted to the previous, good commit.
		gr.Status.LastAttemptedRevision = rev
		err = fmt.Errorf("kustomize build failed: %w", err)
		if retryableRender(err) {
			return failed(v1alpha1.BuildFailedCondition, "BuildFailed", err)
		}
		return waitingFailure(v1alpha1.BuildFailedCondition, "BuildFailed", err)
	}
	clearCondition(&gr.Status.Conditions, v1alpha1.BuildFailedCondition)
	if err := r.startRevision(ctx, run, rev); err != nil {
		return err
	}
	sa, err := r.Tenancy.serviceAccount(gr)
	if errors.Is(err, ErrAccountNotAllowed) {
		return stalledFailure(v1alpha1.ApplyFailedCondition, "ServiceAccountNotAllowed", err)
	}
	if err != nil {
		return stalledFailure(v1alpha1.ApplyFailedCondition, "ServiceAccountRequired", err)
	}
	r.Applying.begin(gr.SourceValue(), rev, objs)
	res, err := r.Applier.Apply(ctx, objs, apply.Options{
		ServiceAccountName: sa, Namespace: gr.Namespace, Confined: r.Tenancy.confined(gr.Namespace),
		Prune: gr.PruneEnabled(), Inventory: gr.Status.Inventory, Source: gr.SourceValue(),
		Check: r.Tenancy.check(gr.Namespace),
	})
	r.Applying.applied(gr.SourceValue(), rev, res.Inventory)
	if res.Inventory != nil {
		gr.Status.Inventory = res.Inventory
	}
	var partial *apply.PartialError
	if errors.As(err, &partial) {
		return r.partlyApplied(gr, rev, res, err)
	}
	if err != nil {
		return applyFailure(err)
	}
	clearCondition(&gr.Status.Conditions, v1alpha1.ApplyFailedCondition)
	if gr.Status.LastAppliedRevision != rev || changed(res.Changes) {
		r.event(gr, corev1.EventTypeNormal, "Applied", fmt.Sprintf("applied revision %s: %s", rev, summary(res.Changes)))
	}
	gr.Status.LastAppliedRevision = rev
	gr.Status.AppliedRevisions = status.AppendRevision(gr.Status.AppliedRevisions, rev, status.OwesSyncVerdict(gr))
	observeApplied(gr, r.now())
	return nil
}

// render builds the revision, unless its worker died before
// (knownBuildFailure).
func (r *GitRepositoryReconciler) render(ctx context.Context, run *gitRun, rev string) ([]*unstructured.Unstructured, error) {
	gr := run.gr
	if f := knownBuildFailure(run, rev); f != nil {
		return nil, knownBuildError(f)
	}
	if run.requested() {
		r.Renderer.Rebuild(gr, rev) // a remembered failure too
	}
	objs, err := r.Renderer.Render(ctx, gr, run.fetched.Dir, rev)
	r.Redact.NoteBuild(client.ObjectKeyFromObject(gr), run.fetched.Dir, objs, err)
	r.noteBuild(run, rev, err)
	if err != nil {
		// The checkout may be what failed (a directory changed on the
		// volume): the next poll reads it again rather than trusting
		// the commit remembered.
		r.Cache.SetCheckedOut(gr.Namespace, run.cacheName, "")
	}
	return objs, err
}

// applyFailure keeps transient API errors retryable; objects the API
// server rejects are a property of the revision, which waits for the next.
func applyFailure(err error) error {
	if len(apply.ObjectErrors(err)) > 0 {
		reason := "ApplyFailed"
		if ingressPolicyRefusal(err) {
			reason = ingressReason(err)
		}
		return waitingFailure(v1alpha1.ApplyFailedCondition, reason, fmt.Errorf("apply failed, nothing was changed: %w", err))
	}
	return failed(v1alpha1.ApplyFailedCondition, "ApplyFailed", fmt.Errorf("apply failed: %w", err))
}

// partlyApplied reports an apply that left out the namespaces where an
// object was refused (one a team created first, say) and applied the
// others. The revision is not applied until every namespace is: it is
// applied again at the next interval, when the refused object may be gone.
func (r *GitRepositoryReconciler) partlyApplied(gr *v1alpha1.GitRepository, rev string, res apply.Result, err error) error {
	if changed(res.Changes) {
		r.event(gr, corev1.EventTypeNormal, "Applied", fmt.Sprintf("applied revision %s in part: %s", rev, summary(res.Changes)))
	}
	return waitingFailure(v1alpha1.ApplyFailedCondition, "PartlyApplied", fmt.Errorf("apply failed in part: %w", err))
}

// startRevision shows a new revision as being applied before the apply
// starts, so that `kubectl get` and the sync commit status say pending.
// The first apply of a GitRepository without commit statuses writes its
// status once, at the end: nobody has watched it yet, and a creation
// costs one status write. With commit statuses the write is needed: the
// rollout status of a first deployment is posted only once the
// GitRepository shows it applies that revision (sourceOf).
//
// A Ready=True of the previous revision becomes Unknown meanwhile: kstatus
// (kubectl wait, Flux, Argo CD) never reads Ready=True beside
// Reconciling=True. A Ready=False keeps saying how the last attempt ended.
func (r *GitRepositoryReconciler) startRevision(ctx context.Context, run *gitRun, rev string) error {
	gr := run.gr
	if gr.Status.LastAppliedRevision == rev && gr.Status.LastAttemptedRevision == rev {
		return nil
	}
	gr.Status.LastAttemptedRevision = rev
	now, msg := r.now(), "applying revision "+rev
	setCondition(&gr.Status.Conditions, gr.Generation, now, v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "Progressing", msg)
	if conditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition) {
		setCondition(&gr.Status.Conditions, gr.Generation, now, v1alpha1.ReadyCondition, metav1.ConditionUnknown, "Progressing", msg)
	}
	if r.Commit != nil {
		if err := r.Commit.ReportSync(ctx, gr, r.saver(run)); err != nil {
			return err
		}
	}
	if gr.Status.LastAppliedRevision == "" && gr.Spec.CommitStatus == nil {
		return nil
	}
	return r.patchStatus(ctx, run)
}

func changed(cs []apply.Change) bool {
	for _, c := range cs {
		if c.Action != apply.ActionUnchanged {
			return true
		}
	}
	return false
}

// summary counts changes by action: "2 created, 1 configured, 3 unchanged".
func summary(cs []apply.Change) string {
	counts := map[string]int{}
	for _, c := range cs {
		counts[c.Action]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	if len(parts) == 0 {
		return "no objects"
	}
	return strings.Join(parts, ", ")
}

// summarize computes Ready from the step conditions, writes commit statuses
// and patches the status once.
func (r *GitRepositoryReconciler) summarize(ctx context.Context, run *gitRun) error {
	gr := run.gr
	gr.Status.ObservedGeneration = gr.Generation
	if !run.stalled {
		clearCondition(&gr.Status.Conditions, v1alpha1.StalledCondition)
	}
	gr.Status.Suspended = gr.IsSuspended()
	if gr.IsSuspended() {
		setSuspended(gr, r.now())
	} else {
		setReady(gr, r.now())
	}
	if r.Commit != nil {
		if err := r.Commit.ReportSync(ctx, gr, r.saver(run)); err != nil {
			return err
		}
	}
	return r.patchStatus(ctx, run)
}

// saver writes run's status for the commit status reporter.
func (r *GitRepositoryReconciler) saver(run *gitRun) func(context.Context) error {
	return func(ctx context.Context) error { return r.patchStatus(ctx, run) }
}

// setSuspended makes a suspended GitRepository say so where users look
// (kubectl get's READY and STATUS columns): it is not ready, because
// nothing of Git reaches the cluster until it is resumed.
func setSuspended(gr *v1alpha1.GitRepository, now time.Time) {
	clearCondition(&gr.Status.Conditions, v1alpha1.ReconcilingCondition)
	setCondition(&gr.Status.Conditions, gr.Generation, now, v1alpha1.ReadyCondition, metav1.ConditionFalse, "Suspended",
		"suspended: neither fetched nor applied until `bg-gitops resume gitrepository "+gr.Name+" -n "+gr.Namespace+"`")
}

func setReady(gr *v1alpha1.GitRepository, now time.Time) {
	conds := &gr.Status.Conditions
	for _, typ := range []string{v1alpha1.FetchFailedCondition, v1alpha1.BuildFailedCondition, v1alpha1.ApplyFailedCondition} {
		if c := findCondition(*conds, typ); c != nil && c.Status == metav1.ConditionTrue {
			setCondition(conds, gr.Generation, now, v1alpha1.ReadyCondition, metav1.ConditionFalse, c.Reason, c.Message)
			clearCondition(conds, v1alpha1.ReconcilingCondition)
			return
		}
	}
	if gr.Status.LastAppliedRevision == "" {
		return
	}
	clearCondition(conds, v1alpha1.ReconcilingCondition)
	setCondition(conds, gr.Generation, now, v1alpha1.ReadyCondition, metav1.ConditionTrue, "Succeeded",
		"Applied revision: "+gr.Status.LastAppliedRevision)
}
