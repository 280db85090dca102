/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pullrequests_heads.go: the heads a pass plans — listed by the forge or
// from the repository's refs (spec.pullRequests.refPattern), filtered and
// cut to spec.pullRequests.max — and the plans kept for them.

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/status"
)

// defaultMaxPullRequests is spec.pullRequests.max when unset.
const defaultMaxPullRequests = 20

// listLimit is how many open pull requests a forge is asked for: the most
// the API schema keeps, so that skipped ones do not crowd out others.
const listLimit = 100

// errNoCommitStatus: the forge's listing needs spec.commitStatus.
var errNoCommitStatus = errors.New("spec.pullRequests lists the open pull requests through spec.commitStatus (provider, address, token), which is not set; " +
	"set it, or list the heads from the repository's refs with spec.pullRequests.refPattern (e.g. refs/pull/*/head)")

// errNoBaseBranch: the forge lists pull requests into a branch.
var errNoBaseBranch = errors.New("spec.pullRequests lists the pull requests into spec.ref.branch, which is not set; " +
	"set it, or list the heads with spec.pullRequests.refPattern")

// misconfigured: the spec cannot list heads until it changes (a change
// wakes the planner; no retry before).
func misconfigured(err error) bool {
	return errors.Is(err, errNoCommitStatus) || errors.Is(err, errNoBaseBranch)
}

// heads are the open pull requests of gr, unfiltered.
func (r *PullRequestReconciler) heads(ctx context.Context, gr *v1alpha1.GitRepository, forge *planForge) ([]status.PullRequest, error) {
	if p := gr.Spec.PullRequests.RefPattern; p != "" {
		return r.refHeads(ctx, gr, p)
	}
	if forge == nil {
		return nil, errNoCommitStatus
	}
	if forge.reviews == nil {
		return nil, fmt.Errorf("list pull requests: %w", forge.reviewsErr)
	}
	base, err := baseBranch(gr)
	if err != nil {
		return nil, err
	}
	var prs []status.PullRequest
	err = forge.call(ctx, func(ctx context.Context) error {
		var err error
		prs, err = forge.reviews.PullRequests(ctx, base, listLimit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list pull requests into %s: %w", base, err)
	}
	return prs, nil
}

// baseBranch is the branch whose pull requests are listed.
func baseBranch(gr *v1alpha1.GitRepository) (string, error) {
	ref := gr.GetRef()
	if ref.Branch == "" {
		return "", errNoBaseBranch
	}
	return ref.Branch, nil
}

// refHeads lists the repository's refs (as a poll does, with the
// GitRepository's own credentials, over SSH in a worker) and keeps those
// pattern matches.
func (r *PullRequestReconciler) refHeads(ctx context.Context, gr *v1alpha1.GitRepository, pattern string) ([]status.PullRequest, error) {
	o, sec, err := r.gitOptions(ctx, gr)
	if err != nil {
		return nil, err
	}
	if r.Worker != nil && !httpURL(o.URL) {
		data, name := secretData(sec)
		names, err := r.Worker.List(ctx, gr.Namespace, o, data, name)
		if err != nil {
			return nil, err
		}
		return matchRefs(names, pattern), nil
	}
	ctx, cancel := context.WithTimeout(ctx, gr.GetTimeout())
	defer cancel()
	refs, err := source.List(ctx, o)
	if err != nil {
		return nil, err
	}
	return matchRefs(source.RefNames(refs), pattern), nil
}

// matchRefs are the refs (name → commit) that pattern matches, its '*' a
// pull request number, the highest number (the newest) first.
func matchRefs(refs map[string]string, pattern string) []status.PullRequest {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	var out []status.PullRequest
	for name, sha := range refs {
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) || len(name) < len(prefix)+len(suffix) {
			continue
		}
		// One ref per number: pr-05 and pr-+5 would be #5 too, and two
		// heads of one number would be planned over each other forever.
		n, ok := canonicalNumber(name[len(prefix) : len(name)-len(suffix)])
		if !ok {
			continue
		}
		out = append(out, status.PullRequest{Number: n, HeadSHA: sha, HeadRef: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number > out[j].Number })
	return out
}

// validHeads drops the heads whose commit is no SHA-1 or SHA-256 hex
// name (a forge's answer is untrusted input), with a Warning event: they
// could never be fetched, and would be tried again at every pass.
func (r *PullRequestReconciler) validHeads(gr *v1alpha1.GitRepository, prs []status.PullRequest) []status.PullRequest {
	return slices.DeleteFunc(prs, func(pr status.PullRequest) bool {
		if isCommitName(pr.HeadSHA) {
			return false
		}
		r.event(gr, corev1.EventTypeWarning, "PullRequestHeadInvalid",
			fmt.Sprintf("pull request %d: the forge names its head %q, not a commit; skipped", pr.Number, status.Truncate(pr.HeadSHA, status.ProviderGitHub)))
		return true
	})
}

// isCommitName: s is a full SHA-1 or SHA-256 commit name, lower-case hex.
func isCommitName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// canonicalNumber parses a pull request number written as forges write
// it: decimal, no sign, no leading zero, above zero.
func canonicalNumber(s string) (int64, bool) {
	if s == "" || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// selectHeads drops the pull requests spec skips and keeps the first
// spec.max of the others, in the listing's order.
func selectHeads(prs []status.PullRequest, spec *v1alpha1.PullRequestsSpec) []status.PullRequest {
	limit := defaultMaxPullRequests
	if spec.Max > 0 {
		limit = int(spec.Max)
	}
	var out []status.PullRequest
	for _, pr := range prs {
		if len(out) == limit {
			break
		}
		if !skipped(pr, spec) {
			out = append(out, pr)
		}
	}
	return out
}

// skipped: pr carries a label or has an author spec skips.
func skipped(pr status.PullRequest, spec *v1alpha1.PullRequestsSpec) bool {
	if pr.Author != "" && slices.Contains(spec.SkipAuthors, pr.Author) {
		return true
	}
	for _, l := range pr.Labels {
		if slices.Contains(spec.SkipLabels, l) {
			return true
		}
	}
	return false
}

// listedPlans keeps the plans of the pull requests still listed: a closed
// or merged one (or one now skipped) is dropped; its comment stays.
func listedPlans(plans []v1alpha1.PullRequestPlan, heads []status.PullRequest) []v1alpha1.PullRequestPlan {
	var out []v1alpha1.PullRequestPlan
	for _, p := range plans {
		if slices.ContainsFunc(heads, func(pr status.PullRequest) bool { return pr.Number == p.Number }) {
			out = append(out, p)
		}
	}
	return out
}

func findPlan(plans []v1alpha1.PullRequestPlan, number int64) (v1alpha1.PullRequestPlan, bool) {
	for _, p := range plans {
		if p.Number == number {
			return p, true
		}
	}
	return v1alpha1.PullRequestPlan{}, false
}

// putPlan replaces the plan of p's number, or adds p; plans stay sorted
// by number, so the status does not churn with the listing's order.
func putPlan(plans []v1alpha1.PullRequestPlan, p v1alpha1.PullRequestPlan) []v1alpha1.PullRequestPlan {
	out := slices.DeleteFunc(plans, func(q v1alpha1.PullRequestPlan) bool { return q.Number == p.Number })
	out = append(out, p)
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}
