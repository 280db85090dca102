/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// github_reviews.go: GitHub's pull requests and plan comments, through
// google/go-github.

package status

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v84/github"
)

type githubReviews struct {
	*githubProvider
	me selfCache
}

// PullRequests reads one page: GitHub filters by base and sorts.
func (g *githubReviews) PullRequests(ctx context.Context, base string, limit int) ([]PullRequest, error) {
	limit = listLimit(limit)
	opt := &gh.PullRequestListOptions{State: "open", Base: base, Sort: "updated", Direction: "desc",
		ListOptions: gh.ListOptions{PerPage: limit}}
	prs, resp, err := g.client.PullRequests.List(ctx, g.owner, g.repo, opt)
	if err != nil {
		return nil, g.wrap("list pull requests", resp, err)
	}
	out := make([]PullRequest, 0, len(prs))
	for _, pr := range prs {
		out = append(out, githubPull(pr))
	}
	return out[:min(len(out), limit)], nil
}

func githubPull(pr *gh.PullRequest) PullRequest {
	head := pr.GetHead().GetRepo()
	p := PullRequest{Number: int64(pr.GetNumber()), HeadSHA: pr.GetHead().GetSHA(),
		HeadRef: fmt.Sprintf("refs/pull/%d/head", pr.GetNumber()), Title: pr.GetTitle(),
		Author: pr.GetUser().GetLogin(),
		// A head repository deleted since is null: count it as a fork.
		Fork: head == nil || head.GetID() != pr.GetBase().GetRepo().GetID()}
	for _, l := range pr.Labels {
		p.Labels = append(p.Labels, l.GetName())
	}
	return p
}

// UpsertComment: see Reviews.
func (g *githubReviews) UpsertComment(ctx context.Context, number int64, prev CommentRef, marker, body string) (CommentRef, error) {
	return upsertComment(ctx, g, &g.me, number, prev, marker, body)
}

func (g *githubReviews) self(ctx context.Context) (int64, error) {
	u, resp, err := g.client.Users.Get(ctx, "")
	if err != nil {
		return 0, g.wrap("read the token's user", resp, err)
	}
	return u.GetID(), nil
}

func (g *githubReviews) comments(ctx context.Context, number int64) ([]comment, error) {
	var out []comment
	opt := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for range maxCommentPages {
		batch, resp, err := g.client.Issues.ListComments(ctx, g.owner, g.repo, int(number), opt)
		if err != nil {
			return nil, g.wrap(fmt.Sprintf("list comments of #%d", number), resp, err)
		}
		for _, c := range batch {
			out = append(out, comment{id: c.GetID(), author: c.GetUser().GetID(), body: c.GetBody()})
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return out, nil
}

func (g *githubReviews) editComment(ctx context.Context, number, id int64, body string) error {
	_, resp, err := g.client.Issues.EditComment(ctx, g.owner, g.repo, id, &gh.IssueComment{Body: gh.Ptr(body)})
	if err != nil {
		return g.wrap(fmt.Sprintf("edit comment %d of #%d", id, number), resp, err)
	}
	return nil
}

func (g *githubReviews) createComment(ctx context.Context, number int64, body string) (CommentRef, error) {
	c, resp, err := g.client.Issues.CreateComment(ctx, g.owner, g.repo, int(number), &gh.IssueComment{Body: gh.Ptr(body)})
	if err != nil {
		return CommentRef{}, g.wrap(fmt.Sprintf("comment on #%d", number), resp, err)
	}
	return CommentRef{ID: c.GetID(), Author: c.GetUser().GetID()}, nil
}
