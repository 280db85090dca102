/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// github.go: the GitHub provider, through google/go-github.

package status

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	gh "github.com/google/go-github/v84/github"
)

// githubProvider uses google/go-github: typed rate-limit errors, per-call
// contexts, Enterprise URLs, and only go-querystring as a dependency.
type githubProvider struct {
	owner, repo, token string
	client             *gh.Client
}

func newGitHub(address, repository, token string, c *http.Client) (*githubProvider, error) {
	owner, repo, err := ownerRepo(repository)
	if err != nil {
		return nil, err
	}
	client := gh.NewClient(c).WithAuthToken(token)
	if address != "" && address != "https://api.github.com" && address != "https://github.com" {
		// GitHub Enterprise Server: go-github appends /api/v3/.
		if client, err = client.WithEnterpriseURLs(address, address); err != nil {
			return nil, fmt.Errorf("github address %q: %w", address, err)
		}
	}
	return &githubProvider{owner: owner, repo: repo, token: token, client: client}, nil
}

func (g *githubProvider) forge() string { return ProviderGitHub }

// List reads the combined status: the latest status per context.
func (g *githubProvider) List(ctx context.Context, sha string) ([]Entry, error) {
	var out []Entry
	opt := &gh.ListOptions{PerPage: 100}
	for {
		combined, resp, err := g.client.Repositories.GetCombinedStatus(ctx, g.owner, g.repo, sha, opt)
		if err != nil {
			return nil, g.wrap("list statuses", resp, err)
		}
		for _, s := range combined.Statuses {
			out = append(out, Entry{Context: s.GetContext(), Description: s.GetDescription(),
				TargetURL: s.GetTargetURL(), State: State(s.GetState())})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// Post creates a status; GitHub's words equal ours.
func (g *githubProvider) Post(ctx context.Context, sha string, s Entry) error {
	st := gh.RepoStatus{
		State:       gh.Ptr(string(s.State)),
		Description: gh.Ptr(Truncate(s.Description, ProviderGitHub)),
		Context:     gh.Ptr(s.Context),
	}
	if s.TargetURL != "" {
		st.TargetURL = gh.Ptr(s.TargetURL)
	}
	_, resp, err := g.client.Repositories.CreateStatus(ctx, g.owner, g.repo, sha, st)
	if err != nil {
		return g.wrap("post status", resp, err)
	}
	return nil
}

func (g *githubProvider) wrap(op string, resp *gh.Response, err error) error {
	where := fmt.Sprintf("github %s %s/%s", op, g.owner, g.repo)
	var rl *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	switch {
	case errors.As(err, &rl):
		// Also returned without a request while the known quota is spent.
		return fmt.Errorf("%s: %w", where, &RateLimitedError{
			RetryAfter: positive(time.Until(rl.Rate.Reset.Time)), Message: forgeText(rl.Message, g.token)})
	case errors.As(err, &abuse):
		wait := defaultRetryAfter
		if abuse.RetryAfter != nil {
			wait = positive(*abuse.RetryAfter)
		}
		return fmt.Errorf("%s: %w", where, &RateLimitedError{RetryAfter: wait, Message: forgeText(abuse.Message, g.token)})
	}
	var er *gh.ErrorResponse
	if resp == nil || resp.Response == nil || !errors.As(err, &er) {
		return fmt.Errorf("%s: %w", where, err)
	}
	return fmt.Errorf("%s: %w", where, classify(resp.StatusCode, resp.Header, errorText(er), g.token, time.Now()))
}

// errorText is GitHub's message with its field errors, without the URL.
func errorText(er *gh.ErrorResponse) string {
	msg := er.Message
	for _, e := range er.Errors {
		if e.Message != "" {
			msg += "; " + e.Field + ": " + e.Message
		} else {
			msg += "; " + e.Field + " " + e.Code
		}
	}
	return msg
}
