/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pullrequests.go: the forge's side of pull-request plans — PlanContext,
// PullRequest and the Reviews interface (listing open pull requests, one
// plan comment per GitRepository edited in place).

package status

import (
	"context"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// planPrefix starts every plan context.
const planPrefix = "bg-gitops/plan/"

// PlanContext is the context of a GitRepository's plan on a pull request's
// head.
func PlanContext(namespace, name string) string {
	return planPrefix + namespace + "/" + name
}

// PullRequest is an open pull (merge) request, as the forge lists it.
type PullRequest struct {
	// Number is the pull request's number (GitLab: the merge request's iid).
	Number int64
	// HeadSHA is the commit at its head.
	HeadSHA string
	// HeadRef is the ref that fetches the head from the base repository,
	// forks included: refs/pull/<n>/head (GitHub, Gitea) or
	// refs/merge-requests/<n>/head (GitLab).
	HeadRef string
	// Title, Author (the forge login) and Labels, for skipping and the
	// report.
	Title  string
	Author string
	Labels []string
	// Fork is true when the head lives in another repository: its content
	// is untrusted input.
	Fork bool
}

// MaxCommentBytes bounds a plan comment's body: longer reports are cut
// with a note (every forge takes at least 65,536 characters).
const MaxCommentBytes = 60000

// Reviews is the forge's pull-request API that plans need.
type Reviews interface {
	// PullRequests lists the open pull requests into base (a branch name),
	// the most recently updated first, at most limit (taken within 1..100).
	PullRequests(ctx context.Context, base string, limit int) ([]PullRequest, error)
	// UpsertComment writes body as the plan comment of pull request
	// number and returns it. prev is the comment written before (zero if
	// unknown): it is edited in place. When prev.ID is 0 or that comment
	// is gone, the comment whose body carries marker is edited, else a
	// new comment is created. Only a comment by the token's own user is
	// edited; when the forge will not name that user (a GitHub App
	// installation token, a Gitea token without read:user), prev.Author
	// stands for it, and without it a new comment is created. body is cut
	// to MaxCommentBytes.
	UpsertComment(ctx context.Context, number int64, prev CommentRef, marker, body string) (CommentRef, error)
}

// CommentRef is a plan comment: its id and its author's id on the forge.
type CommentRef struct {
	ID, Author int64
}

// NewReviews returns the pull-request API of spec's forge, with the same
// address checks, redirect rule, HTTP client and token as NewProvider.
func NewReviews(spec v1alpha1.CommitStatusSpec, token string, o Options) (Reviews, error) {
	p, err := NewProvider(spec, token, o)
	if err != nil {
		return nil, err
	}
	switch p := p.(type) {
	case *giteaProvider:
		return &giteaReviews{giteaProvider: p}, nil
	case *githubProvider:
		return &githubReviews{githubProvider: p}, nil
	case *gitlabProvider:
		return &gitlabReviews{gitlabProvider: p}, nil
	}
	return nil, unknownProvider(spec.Provider)
}
