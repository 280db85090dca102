/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitea_reviews.go: Gitea's pull requests and plan comments, through
// Gitea's SDK.

package status

import (
	"context"
	"fmt"

	sdk "code.gitea.io/sdk/gitea"
)

// giteaPageSize is Gitea's default MAX_RESPONSE_ITEMS: a larger page is
// cut to it.
const giteaPageSize = 50

// maxPullPages bounds the pages of open pull requests read (Gitea filters
// by base branch only on our side).
const maxPullPages = 10

type giteaReviews struct {
	*giteaProvider
	me selfCache
}

// PullRequests pages through open pull requests, most recently updated
// first, and keeps those into base.
func (g *giteaReviews) PullRequests(ctx context.Context, base string, limit int) ([]PullRequest, error) {
	limit = listLimit(limit)
	c, err := g.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []PullRequest
	for page := 1; page <= maxPullPages && len(out) < limit; page++ {
		opt := sdk.ListPullRequestsOptions{State: sdk.StateOpen, Sort: "recentupdate",
			ListOptions: sdk.ListOptions{Page: page, PageSize: giteaPageSize}}
		batch, resp, err := c.ListRepoPullRequests(g.owner, g.repo, opt)
		if err != nil {
			return nil, g.wrap("list pull requests", resp, err)
		}
		out = append(out, giteaPulls(batch, base)...)
		if len(batch) < giteaPageSize {
			break
		}
	}
	return out[:min(len(out), limit)], nil
}

func giteaPulls(batch []*sdk.PullRequest, base string) []PullRequest {
	var out []PullRequest
	for _, pr := range batch {
		if pr.Base == nil || pr.Head == nil || pr.Base.Ref != base {
			continue
		}
		p := PullRequest{Number: pr.Index, HeadSHA: pr.Head.Sha, Title: pr.Title,
			HeadRef: fmt.Sprintf("refs/pull/%d/head", pr.Index), Fork: pr.Head.RepoID != pr.Base.RepoID}
		if pr.Poster != nil {
			p.Author = pr.Poster.UserName
		}
		for _, l := range pr.Labels {
			p.Labels = append(p.Labels, l.Name)
		}
		out = append(out, p)
	}
	return out
}

// UpsertComment: see Reviews.
func (g *giteaReviews) UpsertComment(ctx context.Context, number int64, prev CommentRef, marker, body string) (CommentRef, error) {
	return upsertComment(ctx, g, &g.me, number, prev, marker, body)
}

func (g *giteaReviews) self(ctx context.Context) (int64, error) {
	c, err := g.client(ctx)
	if err != nil {
		return 0, err
	}
	u, resp, err := c.GetMyUserInfo()
	if err != nil {
		return 0, g.wrap("read the token's user", resp, err)
	}
	return u.ID, nil
}

func (g *giteaReviews) comments(ctx context.Context, number int64) ([]comment, error) {
	c, err := g.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []comment
	for page := 1; page <= maxCommentPages; page++ {
		opt := sdk.ListIssueCommentOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: giteaPageSize}}
		batch, resp, err := c.ListIssueComments(g.owner, g.repo, number, opt)
		if err != nil {
			return nil, g.wrap(fmt.Sprintf("list comments of #%d", number), resp, err)
		}
		for _, cm := range batch {
			if cm.Poster != nil {
				out = append(out, comment{id: cm.ID, author: cm.Poster.ID, body: cm.Body})
			}
		}
		if len(batch) < giteaPageSize {
			break
		}
	}
	return out, nil
}

func (g *giteaReviews) editComment(ctx context.Context, number, id int64, body string) error {
	c, err := g.client(ctx)
	if err != nil {
		return err
	}
	_, resp, err := c.EditIssueComment(g.owner, g.repo, id, sdk.EditIssueCommentOption{Body: body})
	if err != nil {
		return g.wrap(fmt.Sprintf("edit comment %d of #%d", id, number), resp, err)
	}
	return nil
}

func (g *giteaReviews) createComment(ctx context.Context, number int64, body string) (CommentRef, error) {
	c, err := g.client(ctx)
	if err != nil {
		return CommentRef{}, err
	}
	cm, resp, err := c.CreateIssueComment(g.owner, g.repo, number, sdk.CreateIssueCommentOption{Body: body})
	if err != nil {
		return CommentRef{}, g.wrap(fmt.Sprintf("comment on #%d", number), resp, err)
	}
	ref := CommentRef{ID: cm.ID}
	if cm.Poster != nil {
		ref.Author = cm.Poster.ID
	}
	return ref, nil
}
