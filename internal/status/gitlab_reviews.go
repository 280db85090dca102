/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitlab_reviews.go: GitLab's merge requests and plan notes, through
// REST API v4.

package status

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

type gitlabReviews struct {
	*gitlabProvider
	me selfCache
}

type gitlabMergeRequest struct {
	IID             int64    `json:"iid"`
	Title           string   `json:"title"`
	SHA             string   `json:"sha"`
	SourceProjectID int64    `json:"source_project_id"`
	TargetProjectID int64    `json:"target_project_id"`
	Labels          []string `json:"labels"`
	Author          struct {
		Username string `json:"username"`
	} `json:"author"`
}

type gitlabNote struct {
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	System bool   `json:"system"`
	Author struct {
		ID int64 `json:"id"`
	} `json:"author"`
}

// PullRequests reads one page: GitLab filters by target branch and sorts.
func (g *gitlabReviews) PullRequests(ctx context.Context, base string, limit int) ([]PullRequest, error) {
	limit = listLimit(limit)
	q := url.Values{"state": {"opened"}, "target_branch": {base}, "order_by": {"updated_at"},
		"sort": {"desc"}, "per_page": {strconv.Itoa(limit)}}
	var mrs []gitlabMergeRequest
	if _, err := g.do(ctx, http.MethodGet, "/merge_requests?"+q.Encode(), nil, &mrs); err != nil {
		return nil, fmt.Errorf("gitlab list merge requests %s: %w", g.project, err)
	}
	out := make([]PullRequest, 0, len(mrs))
	for _, mr := range mrs {
		out = append(out, PullRequest{Number: mr.IID, HeadSHA: mr.SHA, Title: mr.Title,
			HeadRef: fmt.Sprintf("refs/merge-requests/%d/head", mr.IID), Author: mr.Author.Username,
			Labels: mr.Labels, Fork: mr.SourceProjectID != mr.TargetProjectID})
	}
	return out[:min(len(out), limit)], nil
}

// UpsertComment: see Reviews. GitLab calls comments notes.
func (g *gitlabReviews) UpsertComment(ctx context.Context, number int64, prev CommentRef, marker, body string) (CommentRef, error) {
	return upsertComment(ctx, g, &g.me, number, prev, marker, body)
}

func (g *gitlabReviews) self(ctx context.Context) (int64, error) {
	var u struct {
		ID int64 `json:"id"`
	}
	if _, err := g.call(ctx, http.MethodGet, "/user", nil, &u); err != nil {
		return 0, fmt.Errorf("gitlab read the token's user: %w", err)
	}
	return u.ID, nil
}

// comments skips system notes ("added 1 commit"): their author may be the
// token's user, and they cannot be edited.
func (g *gitlabReviews) comments(ctx context.Context, number int64) ([]comment, error) {
	var out []comment
	page := "1"
	for range maxCommentPages {
		var batch []gitlabNote
		path := fmt.Sprintf("/merge_requests/%d/notes?per_page=100&page=%s", number, url.QueryEscape(page))
		h, err := g.do(ctx, http.MethodGet, path, nil, &batch)
		if err != nil {
			return nil, fmt.Errorf("gitlab list notes of !%d in %s: %w", number, g.project, err)
		}
		for _, n := range batch {
			if !n.System {
				out = append(out, comment{id: n.ID, author: n.Author.ID, body: n.Body})
			}
		}
		if page = h.Get("X-Next-Page"); page == "" {
			break
		}
	}
	return out, nil
}

func (g *gitlabReviews) editComment(ctx context.Context, number, id int64, body string) error {
	path := fmt.Sprintf("/merge_requests/%d/notes/%d", number, id)
	if _, err := g.do(ctx, http.MethodPut, path, map[string]string{"body": body}, nil); err != nil {
		return fmt.Errorf("gitlab edit note %d of !%d in %s: %w", id, number, g.project, err)
	}
	return nil
}

func (g *gitlabReviews) createComment(ctx context.Context, number int64, body string) (CommentRef, error) {
	var n gitlabNote
	path := fmt.Sprintf("/merge_requests/%d/notes", number)
	if _, err := g.do(ctx, http.MethodPost, path, map[string]string{"body": body}, &n); err != nil {
		return CommentRef{}, fmt.Errorf("gitlab note on !%d in %s: %w", number, g.project, err)
	}
	return CommentRef{ID: n.ID, Author: n.Author.ID}, nil
}
