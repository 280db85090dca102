/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitlab.go: the GitLab provider, speaking REST API v4 with net/http.

package status

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// gitlabProvider speaks GitLab's REST API v4 with net/http. The official
// client (gitlab.com/gitlab-org/api/client-go) would pull in protobuf
// validation, GraphQL and keyring modules, and retries 429s and waits on its
// own rate limiter inside the call, holding a reconcile worker; two
// endpoints are simpler to speak directly with the errors classified here.
type gitlabProvider struct {
	base, project, token string
	http                 *http.Client
}

func newGitLab(address, repository, token string, c *http.Client) (*gitlabProvider, error) {
	if address == "" {
		address = "https://gitlab.com"
	}
	if repository == "" || strings.HasPrefix(repository, "/") || strings.HasSuffix(repository, "/") {
		return nil, fmt.Errorf("gitlab repository %q: want a project id or group/name", repository)
	}
	// PRIVATE-TOKEN is not a header net/http strips on a redirect to another
	// host, so redirects are not followed at all.
	noRedirect := *c
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &gitlabProvider{base: address + "/api/v4", project: repository, token: token, http: &noRedirect}, nil
}

func (g *gitlabProvider) forge() string { return ProviderGitLab }

type gitlabStatus struct {
	Name        string `json:"name"`
	Status      string `json:"status"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

// List reads the latest status per name (GitLab's default, all=false).
func (g *gitlabProvider) List(ctx context.Context, sha string) ([]Entry, error) {
	var out []Entry
	for page := "1"; page != ""; {
		var batch []gitlabStatus
		path := fmt.Sprintf("/repository/commits/%s/statuses?per_page=100&page=%s", url.PathEscape(sha), page)
		h, err := g.do(ctx, http.MethodGet, path, nil, &batch)
		if err != nil {
			return nil, fmt.Errorf("gitlab list statuses %s: %w", g.project, err)
		}
		for _, s := range batch {
			out = append(out, Entry{Context: s.Name, Description: s.Description,
				TargetURL: s.TargetURL, State: fromGitLab(s.Status)})
		}
		page = h.Get("X-Next-Page")
	}
	return out, nil
}

// Post sets the status of the commit for the name s.Context.
func (g *gitlabProvider) Post(ctx context.Context, sha string, s Entry) error {
	body := map[string]string{
		"state":       toGitLab(s.State),
		"name":        s.Context,
		"description": Truncate(s.Description, ProviderGitLab),
	}
	if s.TargetURL != "" {
		body["target_url"] = s.TargetURL
	}
	_, err := g.do(ctx, http.MethodPost, "/statuses/"+url.PathEscape(sha), body, nil)
	if err != nil && !alreadyInState(err) {
		return fmt.Errorf("gitlab post status %s: %w", g.project, err)
	}
	return nil
}

// alreadyInState: GitLab answers 400 "Cannot transition status via :enqueue
// from :pending" when the named status already has the posted state.
func alreadyInState(err error) bool {
	return strings.Contains(err.Error(), "HTTP 400") && strings.Contains(err.Error(), "Cannot transition status")
}

func toGitLab(s State) string {
	if s == StateFailure {
		return "failed"
	}
	return string(s)
}

func fromGitLab(s string) State {
	if s == "failed" {
		return StateFailure
	}
	return State(s)
}

// do sends one request to /projects/:id<path>; the project id is URL-encoded
// as one path segment (group%2Fname).
func (g *gitlabProvider) do(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	return g.call(ctx, method, "/projects/"+url.PathEscape(g.project)+path, in, out)
}

// call sends one request to <address>/api/v4<path>.
func (g *gitlabProvider) call(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	req, err := g.request(ctx, method, path, in)
	if err != nil {
		return nil, err
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxForgeBody+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 3 {
		return nil, fmt.Errorf("HTTP %d redirect to %q not followed: set the address to the forge's final URL",
			resp.StatusCode, forgeText(resp.Header.Get("Location"), g.token))
	}
	if resp.StatusCode/100 != 2 {
		return nil, classify(resp.StatusCode, resp.Header, gitlabMessage([]byte(redact(string(data), g.token))), g.token, time.Now())
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("decode gitlab response: %w", err)
		}
	}
	return resp.Header, nil
}

func (g *gitlabProvider) request(ctx context.Context, method, path string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("PRIVATE-TOKEN", g.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// gitlabMessage extracts "message" or "error" from an error body.
func gitlabMessage(data []byte) string {
	var body struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil {
		// Not an API answer (the caller removed the token; classify cuts).
		return strconv.Quote(truncateRunes(string(data), maxForgeText))
	}
	if body.Message != nil {
		if s, ok := body.Message.(string); ok {
			return s
		}
		b, _ := json.Marshal(body.Message)
		return string(b)
	}
	return body.Error
}
