/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pullrequests_plan.go: planning one pull request head — pending on the
// head, fetch and render as the sync does (own cache directory, same
// workers, sandbox and limits), prplan.Plan as the applying identity,
// then the verdict and the comment.

package reconcile

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/worker"
)

// planMarker starts the plan comment of a GitRepository: the forge finds
// the comment to edit by it.
func planMarker(gr *v1alpha1.GitRepository) string {
	return "<!-- bg-gitops plan " + gr.Namespace + "/" + gr.Name + " -->"
}

// verdict is what a head's plan says, as posted.
type verdict struct {
	outcome, summary, markdown string
}

// planHead plans pr's head and posts the plan; prev is the pull request's
// plan before (its comment is edited in place). A head that cannot be
// planned for a passing reason (git unreachable, a busy worker, an API
// server hiccup) stays Pending, `pending` on the forge with "retrying:
// <reason>", and is planned again after a backoff; the plan's own verdict
// (its content does not render, the dry-run refuses it, it would stop a
// job without a savepoint) is final for the SHA.
func (r *PullRequestReconciler) planHead(ctx context.Context, run *prRun, pr status.PullRequest, prev v1alpha1.PullRequestPlan) v1alpha1.PullRequestPlan {
	gr, log := run.gr, logf.FromContext(ctx).WithValues("pullRequest", pr.Number, "head", pr.HeadSHA)
	rev := v1alpha1.FormatRevision(pr.HeadRef, pr.HeadSHA)
	plan := v1alpha1.PullRequestPlan{Number: pr.Number, HeadSHA: pr.HeadSHA, Outcome: v1alpha1.PlanPending,
		CommentID: prev.CommentID, CommentAuthorID: prev.CommentAuthorID,
		ObservedGeneration: gr.Generation, Time: metav1.NewTime(r.now())}
	if err := r.post(ctx, run, rev, status.StatePending, "planning"); err != nil {
		// The verdict is posted later; a lasting refusal backs off.
		r.warn(gr, "PlanStatusFailed", err)
		run.retry = true
	}
	v, err := r.verdict(ctx, run, pr, rev)
	if err != nil {
		plan.Summary, run.retry = oneLine("retrying: "+err.Error()), true
		if err := r.post(ctx, run, rev, status.StatePending, plan.Summary); err != nil {
			r.warn(gr, "PlanStatusFailed", err)
		}
		log.V(1).Info("pull request head not planned, retrying", "reason", err.Error())
		return plan
	}
	plan.Outcome, plan.Summary = v.outcome, v.summary
	if run.forge != nil && run.forge.reviews != nil {
		r.mem.keepReport(reportKeyOf(gr, plan), v.markdown)
	}
	log.V(1).Info("pull request planned", "outcome", plan.Outcome, "summary", plan.Summary)
	return r.deliver(ctx, run, pr, plan)
}

func reportKeyOf(gr *v1alpha1.GitRepository, plan v1alpha1.PullRequestPlan) reportKey {
	return reportKey{id: client.ObjectKeyFromObject(gr), number: plan.Number, sha: plan.HeadSHA}
}

// deliver posts the verdict of a planned head and writes its comment,
// each unless done for this head already (StatusSHA, CommentSHA): a
// refusal is tried again at a later pass, without planning again. A
// comment whose report is not remembered (a restart) plans the head
// again.
func (r *PullRequestReconciler) deliver(ctx context.Context, run *prRun, pr status.PullRequest, plan v1alpha1.PullRequestPlan) v1alpha1.PullRequestPlan {
	if run.forge == nil {
		return plan
	}
	gr := run.gr
	if plan.StatusSHA != plan.HeadSHA {
		rev := v1alpha1.FormatRevision(pr.HeadRef, pr.HeadSHA)
		if err := r.post(ctx, run, rev, stateOf(plan.Outcome), plan.Summary); err != nil {
			r.warn(gr, "PlanStatusFailed", err)
			run.retry = true
		} else {
			plan.StatusSHA = plan.HeadSHA
		}
	}
	if plan.CommentSHA == plan.HeadSHA || run.forge.reviews == nil {
		return plan
	}
	k := reportKeyOf(gr, plan)
	md, ok := r.mem.report(k)
	if !ok {
		return r.planHead(ctx, run, pr, plan)
	}
	ref, err := r.comment(ctx, run, pr, status.CommentRef{ID: plan.CommentID, Author: plan.CommentAuthorID}, md)
	if err != nil {
		run.retry = true
		return plan
	}
	plan.CommentID, plan.CommentAuthorID, plan.CommentSHA = ref.ID, ref.Author, plan.HeadSHA
	r.mem.dropReport(k)
	return plan
}

// post posts a plan status when gr has a forge.
func (r *PullRequestReconciler) post(ctx context.Context, run *prRun, rev string, state status.State, desc string) error {
	if run.forge == nil {
		return nil
	}
	return run.forge.post(ctx, run.gr, rev, state, desc)
}

// comment writes the plan comment; a refusal (a token without the right,
// 403) is a Warning event, never the plan's failure.
func (r *PullRequestReconciler) comment(ctx context.Context, run *prRun, pr status.PullRequest, prev status.CommentRef, body string) (status.CommentRef, error) {
	got, err := run.forge.comment(ctx, pr.Number, prev, planMarker(run.gr), body)
	if err != nil {
		return prev, r.warn(run.gr, "PlanCommentFailed", fmt.Errorf("plan comment on pull request %d: %w", pr.Number, err))
	}
	return got, nil
}

// oneLine cuts a message to a commit status's shortest limit (GitHub's
// 140 characters) for status.pullRequests.
func oneLine(msg string) string { return status.Truncate(msg, status.ProviderGitHub) }

func stateOf(outcome string) status.State {
	if outcome == v1alpha1.PlanSucceeded {
		return status.StateSuccess
	}
	return status.StateFailure
}

// verdict fetches, renders and plans pr's head. A failure that is the
// head's own (planVerdict) is a Failed verdict; any other is returned,
// scrubbed, and the head is planned again later.
func (r *PullRequestReconciler) verdict(ctx context.Context, run *prRun, pr status.PullRequest, rev string) (verdict, error) {
	res, err := r.planOf(ctx, run, pr, rev)
	if err != nil {
		msg := r.scrubber(run.gr).Scrub(err.Error())
		if !planVerdict(err) {
			return verdict{}, errors.New(msg)
		}
		return verdict{outcome: v1alpha1.PlanFailed, summary: oneLine(msg),
			markdown: planMarker(run.gr) + "\n\n**bg-gitops could not plan " + v1alpha1.ShortSHA(pr.HeadSHA) + "**: " + msg + "\n"}, nil
	}
	return verdict{outcome: res.Outcome(), summary: r.scrubber(run.gr).Scrub(res.Summary()), markdown: res.Markdown(planMarker(run.gr))}, nil
}

// headError is a failure of the head itself: its content does not build,
// or the spec cannot fetch it until it changes.
type headError struct{ err error }

func (e *headError) Error() string { return e.err.Error() }
func (e *headError) Unwrap() error { return e.err }

// planVerdict: err is the head's own verdict, final for its SHA — its
// content does not render, or the fetch cannot work until the spec or
// the repository changes (source.Error.Terminal). A timeout, a worker
// that failed, git unreachable or an API error passes.
func planVerdict(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, worker.ErrWorker) {
		return false
	}
	var he *headError
	var se *source.Error
	switch {
	case errors.As(err, &he):
		return true
	case errors.As(err, &se):
		return se.Terminal()
	}
	return false
}

// planOf is prplan's plan of pr's head.
func (r *PullRequestReconciler) planOf(ctx context.Context, run *prRun, pr status.PullRequest, rev string) (*prplan.Result, error) {
	gr := run.gr
	objs, rev, err := r.headObjects(ctx, run, pr, rev)
	if err != nil {
		return nil, err
	}
	sa, err := r.Tenancy.serviceAccount(gr)
	if err != nil {
		return nil, &headError{err} // the spec's: planned again when it changes
	}
	applier, err := r.Applier.ClientFor(gr.Namespace, sa)
	if err != nil {
		return nil, err
	}
	return r.plan()(ctx, prplan.Input{GitRepository: gr, PullRequest: pr, Head: objs, HeadRevision: rev,
		Applier: applier, Confined: r.Tenancy.confined(gr.Namespace), Check: r.Tenancy.check(gr.Namespace),
		Reader: r.Reader, Now: r.now(), CheckChild: CheckChild, ObserveChild: ObserveChild})
}

// headObjects fetches pr's head into the heads' directory and renders
// it, finished as the sync finishes its objects. The revision is the
// commit fetched: the ref may have moved since it was listed.
func (r *PullRequestReconciler) headObjects(ctx context.Context, run *prRun, pr status.PullRequest, rev string) ([]*unstructured.Unstructured, string, error) {
	fetched, err := r.fetchHead(ctx, run, pr)
	if err != nil {
		return nil, rev, err
	}
	if fetched.Commit != pr.HeadSHA {
		return nil, rev, fmt.Errorf("the head moved to %s while %s was planned; the new head is planned next",
			v1alpha1.ShortSHA(fetched.Commit), v1alpha1.ShortSHA(pr.HeadSHA))
	}
	objs, err := r.Renderer.RenderHead(ctx, run.gr, fetched.Dir, fetched.Revision)
	r.Redact.NoteBuild(pullsKey(client.ObjectKeyFromObject(run.gr)), fetched.Dir, objs, err)
	if err != nil {
		k := pullsKey(client.ObjectKeyFromObject(run.gr))
		r.Cache.SetCheckedOut(k.Namespace, k.Name, "")
		return nil, fetched.Revision, &headError{fmt.Errorf("kustomize build failed: %w", err)}
	}
	return objs, fetched.Revision, nil
}

// fetchHead fetches the commit listed for pr (no second listing), in a
// worker when the controller has them, with the GitRepository's own
// credentials and limits: a fork's head gets nothing more.
func (r *PullRequestReconciler) fetchHead(ctx context.Context, run *prRun, pr status.PullRequest) (source.Result, error) {
	o, sec, err := r.gitOptions(ctx, run.gr)
	if err != nil {
		return source.Result{}, err
	}
	k := pullsKey(client.ObjectKeyFromObject(run.gr))
	o.Dir, o.CheckedOut = run.dir, r.Cache.CheckedOut(k.Namespace, k.Name)
	o.Ref = v1alpha1.GitRepositoryRef{Name: pr.HeadRef}
	o.Target = &source.Target{RemoteRef: pr.HeadRef, RevRef: pr.HeadRef, Commit: pr.HeadSHA}
	var res source.Result
	if r.Worker == nil {
		res, err = source.Fetch(ctx, o)
	} else {
		data, name := secretData(sec)
		res, err = r.Worker.Fetch(ctx, run.gr.Namespace, o, data, name, "")
	}
	r.Cache.SetCheckedOut(k.Namespace, k.Name, checkedOut(res, err))
	return res, err
}

func secretData(sec *corev1.Secret) (map[string][]byte, string) {
	if sec == nil {
		return nil, ""
	}
	return sec.Data, sec.Name
}

// gitOptions are the sync's fetch options for gr (URL, credentials,
// timeout, limits, URL policy) and the Secret its Auth was made from.
func (r *PullRequestReconciler) gitOptions(ctx context.Context, gr *v1alpha1.GitRepository) (source.Options, *corev1.Secret, error) {
	o := source.Options{URL: gr.Spec.URL, Timeout: gr.GetTimeout(), Limits: r.GitLimits,
		AllowFileURLs: r.AllowFileURLs, AllowInsecureHTTP: r.AllowInsecureHTTP}
	if gr.Spec.SecretRef == nil {
		return o, nil, nil
	}
	sec := &corev1.Secret{}
	if err := r.Client.Get(ctx, secretKey(gr, gr.Spec.SecretRef.Name), sec); err != nil {
		return o, nil, fmt.Errorf("read Secret %s: %w", gr.Spec.SecretRef.Name, err)
	}
	r.Redact.NoteSecret(sec)
	a, err := source.AuthFromSecret(sec.Data, gr.Spec.URL)
	if err != nil {
		return o, nil, err
	}
	a.SecretName = sec.Name
	o.Auth = a
	return o, sec, nil
}

// RenderHead renders gr's path at revision from dir as Render does (same
// options, worker and finish) without touching the remembered renders:
// a pull request's head never stands in for the sync's revision.
func (r *Renderer) RenderHead(ctx context.Context, gr *v1alpha1.GitRepository, dir, revision string) ([]*unstructured.Unstructured, error) {
	o := r.Options
	o.Revision, o.Source, o.Tenant = revision, gr.SourceValue(), gr.Namespace
	raw, err := r.build(ctx, dir, gr.GetPath(), o)
	if err != nil {
		return nil, err
	}
	return r.finish(raw, revision, gr)
}
