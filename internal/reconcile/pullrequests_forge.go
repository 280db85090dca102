/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pullrequests_forge.go: planForge, the forge of a GitRepository's plans —
// commit statuses and the plan comment, each call within the commit
// status reporter's fence, budget and rate limits, every message scrubbed.

package reconcile

import (
	"context"
	"errors"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/redact"
	"bggitops.dev/bg-gitops/internal/status"
)

// planForge is the forge of one GitRepository's plans, for one pass.
type planForge struct {
	c        *CommitStatusReporter
	ns, key  string
	provider status.Provider
	// reviews is nil when the forge's pull-request API cannot be made
	// (reviewsErr says why): statuses are still posted.
	reviews    status.Reviews
	reviewsErr error
	scrub      redact.Scrubber
}

// forge is gr's forge, nil without spec.commitStatus (or a reporter).
func (r *PullRequestReconciler) forge(ctx context.Context, gr *v1alpha1.GitRepository) (*planForge, error) {
	cs := gr.Spec.CommitStatus
	if cs == nil || r.Commit == nil {
		return nil, nil
	}
	token, err := r.Commit.token(ctx, gr)
	if err != nil {
		return nil, err
	}
	o := status.Options{HTTP: r.httpClient(), AllowInsecureHTTP: r.AllowInsecureHTTP}
	p, err := status.NewProvider(*cs, token, o)
	if err != nil {
		return nil, err
	}
	f := &planForge{c: r.Commit, ns: gr.Namespace, key: cs.Provider + "|" + cs.Address + "|" + cs.Repository,
		provider: p, scrub: r.scrubber(gr).And(redact.ForValue(token))}
	f.reviews, f.reviewsErr = r.newReviews()(*cs, token, o)
	return f, nil
}

// call runs one round of forge calls within the reporter's deadline (its
// fence, the namespace's forge budget, a rate limit the forge asked for)
// and returns its error scrubbed.
func (f *planForge) call(ctx context.Context, fn func(context.Context) error) error {
	start, deadline, err := f.c.callDeadline(ctx, f.ns, f.key)
	if err != nil {
		return f.scrub.ScrubError(err)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err = fn(ctx)
	f.c.Budget.spend(f.ns, time.Now(), time.Since(start))
	var rl *status.RateLimitedError
	if errors.As(err, &rl) {
		f.c.block(f.key, f.c.now().Add(rl.RetryAfter))
	}
	return f.scrub.ScrubError(err)
}

// post makes the plan status of revision (<ref>@sha1:<hex>) state with
// description, unless the commit has it already.
func (f *planForge) post(ctx context.Context, gr *v1alpha1.GitRepository, revision string, state status.State, description string) error {
	d := status.Desired{Revision: revision, Status: status.Entry{Context: status.PlanContext(gr.Namespace, gr.Name),
		State: state, Description: f.scrub.Scrub(description)}}
	return f.call(ctx, func(ctx context.Context) error {
		_, err := status.Sync(ctx, f.provider, []status.Desired{d})
		return err
	})
}

// comment writes body as the plan comment of pull request number, edited
// in place (prev, else the marker); it returns the comment, or prev and
// an error when the forge refused.
func (f *planForge) comment(ctx context.Context, number int64, prev status.CommentRef, marker, body string) (status.CommentRef, error) {
	if f.reviews == nil {
		return prev, nil
	}
	got := prev
	err := f.call(ctx, func(ctx context.Context) error {
		var err error
		got, err = f.reviews.UpsertComment(ctx, number, prev, marker, f.scrub.Scrub(body))
		return err
	})
	if err != nil {
		return prev, err
	}
	return got, nil
}
