/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

const testToken = "ghp_s3cretTOKENvalue"

// githubAPI implements POST /repos/{owner}/{repo}/statuses/{sha} ("Create a
// commit status") and GET /repos/{owner}/{repo}/commits/{ref}/status ("Get
// the combined status for a specific reference") as documented.
func githubAPI(f *fakeForge, w http.ResponseWriter, r *http.Request) {
	if !githubHeadersOK(f, w, r) {
		return
	}
	repo := f.prefix + "/repos/" + f.project
	if sha, ok := shaFromPath(r.URL.Path, repo+"/statuses/", ""); ok && r.Method == http.MethodPost {
		githubCreate(f, w, r, sha)
		return
	}
	if sha, ok := shaFromPath(r.URL.Path, repo+"/commits/", "/status"); ok && r.Method == http.MethodGet {
		githubCombined(f, w, r, sha)
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

// githubHeadersOK checks the headers every GitHub REST request carries.
func githubHeadersOK(f *fakeForge, w http.ResponseWriter, r *http.Request) bool {
	if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
		f.fail(w, "Authorization = %q, want Bearer token", got)
		return false
	}
	// go-github lists comments with the reactions preview type,
	// application/vnd.github.squirrel-girl-preview, which GitHub still takes.
	if a := r.Header.Get("Accept"); !strings.HasPrefix(a, "application/vnd.github") {
		f.fail(w, "Accept = %q, want application/vnd.github…", a)
		return false
	}
	if r.Header.Get("X-GitHub-Api-Version") == "" {
		f.fail(w, "missing X-GitHub-Api-Version")
		return false
	}
	return true
}

func githubCreate(f *fakeForge, w http.ResponseWriter, r *http.Request, sha string) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.fail(w, "Content-Type = %q", ct)
		return
	}
	var body struct {
		State       string  `json:"state"`
		TargetURL   *string `json:"target_url"`
		Description *string `json:"description"`
		Context     *string `json:"context"`
	}
	if err := decodeStrict(r, &body); err != nil {
		f.fail(w, "body: %v", err)
		return
	}
	switch body.State {
	case "error", "failure", "pending", "success":
	default:
		f.fail(w, "state %q", body.State)
		return
	}
	if body.Context == nil || body.Description == nil {
		f.fail(w, "context and description must be sent")
		return
	}
	if runeLen(*body.Description) > 140 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
			"errors": []map[string]string{{"resource": "Status", "code": "custom", "field": "description",
				"message": "description is too long (maximum is 140 characters)"}}})
		return
	}
	s := Entry{Context: *body.Context, Description: *body.Description, State: State(body.State)}
	if body.TargetURL != nil {
		s.TargetURL = *body.TargetURL
	}
	f.add(sha, s)
	writeJSON(w, http.StatusCreated, map[string]any{"id": f.postCount(), "state": s.State,
		"description": s.Description, "context": s.Context, "target_url": s.TargetURL})
}

func githubCombined(f *fakeForge, w http.ResponseWriter, r *http.Request, sha string) {
	var items []map[string]any
	for _, s := range f.latest(sha) {
		items = append(items, map[string]any{"state": s.State, "context": s.Context,
			"description": s.Description, "target_url": s.TargetURL})
	}
	chunk, next := page(items, r)
	if next > 0 {
		u := *r.URL
		q := u.Query()
		q.Set("page", strconv.Itoa(next))
		u.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, u.RequestURI()))
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": "pending", "sha": sha,
		"total_count": len(items), "statuses": chunk})
}

func newGitHubForTest(t *testing.T) (*fakeForge, Provider) {
	f := newFakeForge(t, "/api/v3", "acme/app", githubAPI)
	p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: "github", Address: f.srv.URL,
		Repository: "acme/app"}, testToken, Options{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}

func TestGitHubPostAndList(t *testing.T) {
	_, p := newGitHubForTest(t)
	ctx := context.Background()
	posted := []Entry{
		{Context: SyncContext("ns", "a"), State: StatePending, Description: "applying"},
		{Context: SyncContext("ns", "a"), State: StateSuccess, Description: "applied", TargetURL: "https://ci.example/a"},
		{Context: RolloutContext("ns", "b"), State: StateFailure, Description: strings.Repeat("x", 200)},
		{Context: RolloutContext("ns", "c"), State: StatePending, Description: "savepointing blue"},
	}
	for _, s := range posted {
		if err := p.Post(ctx, sha40, s); err != nil {
			t.Fatalf("post %+v: %v", s, err)
		}
	}
	got, err := p.List(ctx, sha40)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Entry{
		posted[1].Context: posted[1],
		posted[2].Context: {Context: posted[2].Context, State: StateFailure, Description: Truncate(posted[2].Description, "github")},
		posted[3].Context: posted[3],
	}
	if len(got) != len(want) {
		t.Fatalf("List = %+v, want the 3 latest (pagination followed)", got)
	}
	for _, s := range got {
		if s != want[s.Context] {
			t.Errorf("List has %+v, want %+v", s, want[s.Context])
		}
	}
}

func TestGitHubDefaultAddressIsAPIGitHubCom(t *testing.T) {
	f := newFakeForge(t, "", "acme/app", githubAPI)
	var hosts []string
	target, _ := url.Parse(f.srv.URL)
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		hosts = append(hosts, r.URL.Scheme+"://"+r.URL.Host)
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
	p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: "github", Repository: "acme/app"}, testToken, Options{HTTP: client})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Post(context.Background(), sha40, Entry{Context: "c", State: StateSuccess}); err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 1 || hosts[0] != "https://api.github.com" {
		t.Fatalf("requests went to %v", hosts)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestGitHubErrors(t *testing.T) {
	reset := strconv.FormatInt(time.Now().Add(2*time.Minute).Unix(), 10)
	tests := []struct {
		name   string
		resp   cannedResponse
		target error
		rate   bool
	}{
		{"401", cannedResponse{401, nil, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`}, ErrUnauthorized, false},
		{"403 no permission", cannedResponse{403, map[string]string{"X-RateLimit-Remaining": "4999"}, `{"message":"Resource not accessible by integration"}`}, ErrUnauthorized, false},
		{"404", cannedResponse{404, nil, `{"message":"Not Found"}`}, ErrNotFound, false},
		{"422", cannedResponse{422, nil, `{"message":"Validation Failed","errors":[{"resource":"Status","code":"custom","field":"state","message":"state is not included in the list"}]}`}, nil, false},
		{"403 primary rate limit", cannedResponse{403, map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset, "X-RateLimit-Resource": "core"}, `{"message":"API rate limit exceeded"}`}, nil, true},
		{"429 secondary rate limit", cannedResponse{429, map[string]string{"Retry-After": "30"}, `{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`}, nil, true},
		{"500", cannedResponse{500, nil, `{"message":"Server Error"}`}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, p := newGitHubForTest(t)
			f.failNext(tt.resp)
			err := p.Post(context.Background(), sha40, Entry{Context: "c", State: StateSuccess, Description: "d"})
			checkErr(t, err, tt.target, tt.rate)
			if tt.name == "422" && !strings.Contains(err.Error(), "state is not included") {
				t.Errorf("422 error should carry GitHub's field message: %v", err)
			}
		})
	}
}

// checkErr asserts the error's class and that the token never leaks.
func checkErr(t *testing.T, err, target error, rate bool) {
	t.Helper()
	if err == nil {
		t.Fatal("want an error")
	}
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("error leaks the token: %v", err)
	}
	var rl *RateLimitedError
	isRate := errors.As(err, &rl)
	switch {
	case rate && (!isRate || rl.RetryAfter < time.Second || rl.RetryAfter > 3*time.Minute):
		t.Fatalf("want rate limited with a sane RetryAfter, got %v", err)
	case !rate && isRate:
		t.Fatalf("unexpected rate limit error: %v", err)
	case target != nil && !errors.Is(err, target):
		t.Fatalf("got %v, want %v", err, target)
	case target == nil && (errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrNotFound)):
		t.Fatalf("want a transient error, got %v", err)
	}
}
