/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// api.go: the Gitea API the tests call: CreateRepo, CreatePushWebhook,
// CommitStatuses (Status), BranchHead, and the clone URLs.

package gitea

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Status is a commit status as Gitea's API returns it.
type Status struct {
	ID          int64  `json:"id"`
	Context     string `json:"context"`
	State       string `json:"status"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
	// Created is when Gitea recorded it.
	Created time.Time `json:"created_at"`
}

// CreateRepo creates an empty repository (no auto-init) owned by the admin
// user and returns its HTTP clone URL.
func (s *Server) CreateRepo(ctx context.Context, name string) (string, error) {
	body := map[string]any{"name": name, "auto_init": false, "private": false, "default_branch": "main"}
	var repo struct {
		CloneURL string `json:"clone_url"`
	}
	if err := s.api(ctx, http.MethodPost, "/user/repos", body, &repo); err != nil {
		return "", fmt.Errorf("create repo %s: %w", name, err)
	}
	return repo.CloneURL, nil
}

// CreatePushWebhook adds a Gitea-type webhook for push events on all
// branches, delivering JSON to targetURL signed with secret.
func (s *Server) CreatePushWebhook(ctx context.Context, repo, targetURL, secret string) error {
	body := map[string]any{
		"type":          "gitea",
		"active":        true,
		"events":        []string{"push"},
		"branch_filter": "*",
		"config":        map[string]string{"url": targetURL, "content_type": "json", "secret": secret},
	}
	if err := s.api(ctx, http.MethodPost, s.repoPath(repo)+"/hooks", body, nil); err != nil {
		return fmt.Errorf("create webhook on %s: %w", repo, err)
	}
	return nil
}

// CommitStatuses returns every status on the commit as recorded by Gitea
// (duplicates included, so tests can count them), in Gitea's order, which
// is not by time: sort by ID for the order of posting.
func (s *Server) CommitStatuses(ctx context.Context, repo, sha string) ([]Status, error) {
	var all []Status
	for page := 1; ; page++ {
		var batch []Status
		path := fmt.Sprintf("%s/commits/%s/statuses?limit=50&page=%d", s.repoPath(repo), url.PathEscape(sha), page)
		if err := s.api(ctx, http.MethodGet, path, nil, &batch); err != nil {
			return nil, fmt.Errorf("list statuses of %s@%s: %w", repo, sha, err)
		}
		all = append(all, batch...)
		if len(batch) < 50 {
			return all, nil
		}
	}
}

// BranchHead returns the commit a branch points at and its message.
func (s *Server) BranchHead(ctx context.Context, repo, branch string) (sha, message string, err error) {
	var b struct {
		Commit struct {
			ID      string `json:"id"`
			Message string `json:"message"`
		} `json:"commit"`
	}
	if err := s.api(ctx, http.MethodGet, s.repoPath(repo)+"/branches/"+url.PathEscape(branch), nil, &b); err != nil {
		return "", "", fmt.Errorf("read branch %s of %s: %w", branch, repo, err)
	}
	return b.Commit.ID, b.Commit.Message, nil
}

// AuthCloneURL is the repository's HTTP URL with the admin credentials, for
// pushing from tests.
func (s *Server) AuthCloneURL(repo string) string {
	u, _ := url.Parse(s.URL)
	u.User = url.UserPassword(s.AdminUser, s.AdminPassword)
	u.Path = "/" + s.AdminUser + "/" + repo + ".git"
	return u.String()
}

// CloneURL is the repository's HTTP URL without credentials.
func (s *Server) CloneURL(repo string) string {
	return s.URL + "/" + s.AdminUser + "/" + repo + ".git"
}

// Repository is "<admin>/<repo>", the form commitStatus.repository takes.
func (s *Server) Repository(repo string) string { return s.AdminUser + "/" + repo }

func (s *Server) repoPath(repo string) string {
	return "/repos/" + url.PathEscape(s.AdminUser) + "/" + url.PathEscape(repo)
}

// createToken makes an all-scopes API token with basic auth.
func (s *Server) createToken(ctx context.Context) (string, error) {
	body := map[string]any{"name": "bggitops-" + randomHex(8), "scopes": []string{"all"}}
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	err := s.do(ctx, http.MethodPost, "/users/"+url.PathEscape(s.AdminUser)+"/tokens", body, &tok, func(r *http.Request) {
		r.SetBasicAuth(s.AdminUser, s.AdminPassword)
	})
	if err != nil {
		return "", fmt.Errorf("create gitea token: %w", err)
	}
	return tok.SHA1, nil
}

func (s *Server) api(ctx context.Context, method, path string, in, out any) error {
	return s.do(ctx, method, path, in, out, func(r *http.Request) {
		r.Header.Set("Authorization", "token "+s.Token)
	})
}

func (s *Server) do(ctx context.Context, method, path string, in, out any, auth func(*http.Request)) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+"/api/v1"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	auth(req)
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data)))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}
