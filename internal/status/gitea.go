/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitea.go: the Gitea provider, through Gitea's SDK.

package status

import (
	"context"
	"fmt"
	"net/http"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// giteaProvider uses Gitea's official SDK. The SDK takes its context per
// client, so each call builds a cheap client bound to the call's context.
type giteaProvider struct {
	url, owner, repo, token string
	http                    *http.Client
}

func newGitea(address, repository, token string, c *http.Client) (*giteaProvider, error) {
	if address == "" {
		return nil, fmt.Errorf("gitea: address is required")
	}
	owner, repo, err := ownerRepo(repository)
	if err != nil {
		return nil, err
	}
	return &giteaProvider{url: address, owner: owner, repo: repo, token: token, http: c}, nil
}

func (g *giteaProvider) forge() string { return ProviderGitea }

func (g *giteaProvider) client(ctx context.Context) (*sdk.Client, error) {
	// An empty version skips the SDK's /version probe: one request less,
	// and no failure at construction when the forge is down.
	return sdk.NewClient(g.url, sdk.SetToken(g.token), sdk.SetHTTPClient(g.http),
		sdk.SetContext(ctx), sdk.SetGiteaVersion(""))
}

// List pages through all statuses and keeps the newest (highest id) per
// context: the combined-status endpoint is paged to 30 contexts by default.
func (g *giteaProvider) List(ctx context.Context, sha string) ([]Entry, error) {
	c, err := g.client(ctx)
	if err != nil {
		return nil, err
	}
	latest := map[string]*sdk.Status{}
	var order []string
	for page := 1; ; page++ {
		opt := sdk.ListStatusesOption{ListOptions: sdk.ListOptions{Page: page, PageSize: 50}}
		batch, resp, err := c.ListStatuses(g.owner, g.repo, sha, opt)
		if err != nil {
			return nil, g.wrap("list statuses", resp, err)
		}
		for _, s := range batch {
			if cur, ok := latest[s.Context]; !ok || s.ID > cur.ID {
				if !ok {
					order = append(order, s.Context)
				}
				latest[s.Context] = s
			}
		}
		if len(batch) < 50 {
			break
		}
	}
	out := make([]Entry, 0, len(order))
	for _, k := range order {
		s := latest[k]
		out = append(out, Entry{Context: s.Context, Description: s.Description,
			TargetURL: s.TargetURL, State: State(s.State)})
	}
	return out, nil
}

// Post creates a status; Gitea's words equal ours.
func (g *giteaProvider) Post(ctx context.Context, sha string, s Entry) error {
	c, err := g.client(ctx)
	if err != nil {
		return err
	}
	_, resp, err := c.CreateStatus(g.owner, g.repo, sha, sdk.CreateStatusOption{
		State: sdk.StatusState(s.State), TargetURL: s.TargetURL,
		Description: Truncate(s.Description, ProviderGitea), Context: s.Context,
	})
	if err != nil {
		return g.wrap("post status", resp, err)
	}
	return nil
}

func (g *giteaProvider) wrap(op string, resp *sdk.Response, err error) error {
	if resp == nil || resp.Response == nil {
		// Transport error: no response, nothing that could hold the token.
		return fmt.Errorf("gitea %s %s/%s: %w", op, g.owner, g.repo, err)
	}
	return fmt.Errorf("gitea %s %s/%s: %w", op, g.owner, g.repo,
		classify(resp.StatusCode, resp.Header, err.Error(), g.token, time.Now()))
}
