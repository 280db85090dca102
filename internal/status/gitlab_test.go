/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// gitlabAPI implements POST /projects/:id/statuses/:sha ("Set the pipeline
// status of a commit") and GET /projects/:id/repository/commits/:sha/statuses
// ("List the statuses of a commit") of GitLab's REST API v4 as documented.
func gitlabAPI(f *fakeForge, w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("PRIVATE-TOKEN"); got != testToken {
		f.fail(w, "PRIVATE-TOKEN = %q", got)
		return
	}
	// The project path is one URL-encoded segment: group%2Fsub%2Fapp.
	project := f.prefix + "/projects/" + f.project
	path := r.URL.EscapedPath()
	if sha, ok := shaFromPath(path, project+"/statuses/", ""); ok && r.Method == http.MethodPost {
		gitlabCreate(f, w, r, sha)
		return
	}
	if sha, ok := shaFromPath(path, project+"/repository/commits/", "/statuses"); ok && r.Method == http.MethodGet {
		gitlabList(f, w, r, sha)
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Project Not Found"})
}

func gitlabCreate(f *fakeForge, w http.ResponseWriter, r *http.Request, sha string) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.fail(w, "Content-Type = %q", ct)
		return
	}
	var body struct {
		State       string `json:"state"`
		Name        string `json:"name"`
		Description string `json:"description"`
		TargetURL   string `json:"target_url"`
	}
	if err := decodeStrict(r, &body); err != nil {
		f.fail(w, "body: %v", err)
		return
	}
	switch body.State {
	case "pending", "running", "success", "failed", "canceled", "skipped":
	default:
		f.fail(w, "state %q (GitLab says failed, not failure)", body.State)
		return
	}
	if body.Name == "" {
		f.fail(w, "name (the status context) missing")
		return
	}
	for _, s := range f.latest(sha) {
		if s.Context == body.Name && string(toGitLab(s.State)) == body.State {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Cannot transition status via :enqueue from :" + body.State + " (Reason(s): Status cannot transition via \"enqueue\")"})
			return
		}
	}
	s := Entry{Context: body.Name, Description: body.Description, TargetURL: body.TargetURL, State: fromGitLab(body.State)}
	f.add(sha, s)
	writeJSON(w, http.StatusCreated, map[string]any{"id": f.postCount(), "sha": sha, "status": body.State,
		"name": body.Name, "description": body.Description, "target_url": body.TargetURL})
}

func gitlabList(f *fakeForge, w http.ResponseWriter, r *http.Request, sha string) {
	var items []map[string]any
	for _, s := range f.latest(sha) {
		items = append(items, map[string]any{"sha": sha, "status": toGitLab(s.State), "name": s.Context,
			"description": s.Description, "target_url": s.TargetURL, "allow_failure": false})
	}
	chunk, next := page(items, r)
	if next > 0 {
		w.Header().Set("X-Next-Page", strconv.Itoa(next))
	}
	writeJSON(w, http.StatusOK, chunk)
}

func newGitLabForTest(t *testing.T) (*fakeForge, Provider) {
	f := newFakeForge(t, "/api/v4", "group%2Fsub%2Fapp", gitlabAPI)
	p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: "gitlab", Address: f.srv.URL + "/",
		Repository: "group/sub/app"}, testToken, Options{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}

func TestGitLabPostAndList(t *testing.T) {
	_, p := newGitLabForTest(t)
	ctx := context.Background()
	posted := []Entry{
		{Context: SyncContext("ns", "a"), State: StatePending, Description: "applying"},
		{Context: SyncContext("ns", "a"), State: StateFailure, Description: "kustomize build failed: " + strings.Repeat("y", 300)},
		{Context: RolloutContext("ns", "b"), State: StateSuccess, Description: "green active", TargetURL: "https://ci.example/b"},
		{Context: RolloutContext("ns", "c"), State: StatePending, Description: "waiting for rollout window"},
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
	failed := posted[1]
	failed.Description = Truncate(failed.Description, "gitlab")
	want := map[string]Entry{failed.Context: failed, posted[2].Context: posted[2], posted[3].Context: posted[3]}
	if len(got) != len(want) {
		t.Fatalf("List = %+v, want the 3 latest (pagination followed)", got)
	}
	for _, s := range got {
		if s != want[s.Context] {
			t.Errorf("List has %+v, want %+v", s, want[s.Context])
		}
	}
}

func TestGitLabSameStateIsAcknowledged(t *testing.T) {
	f, p := newGitLabForTest(t)
	s := Entry{Context: "c", State: StatePending, Description: "one"}
	for i := 0; i < 2; i++ {
		s.Description = "attempt " + strconv.Itoa(i)
		if err := p.Post(context.Background(), sha40, s); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	if n := f.postCount(); n != 1 {
		t.Fatalf("forge stored %d statuses, want 1", n)
	}
}

func TestGitLabErrors(t *testing.T) {
	reset := strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10)
	tests := []struct {
		name   string
		resp   cannedResponse
		target error
		rate   bool
	}{
		{"401", cannedResponse{401, nil, `{"message":"401 Unauthorized"}`}, ErrUnauthorized, false},
		{"403", cannedResponse{403, nil, `{"message":"403 Forbidden"}`}, ErrUnauthorized, false},
		{"404", cannedResponse{404, nil, `{"message":"404 Project Not Found"}`}, ErrNotFound, false},
		{"422", cannedResponse{422, nil, `{"message":{"target_url":["is too long (maximum is 255 characters)"]}}`}, nil, false},
		{"429", cannedResponse{429, map[string]string{"RateLimit-Limit": "600", "RateLimit-Remaining": "0", "RateLimit-Reset": reset, "Retry-After": "60"}, `Retry later`}, nil, true},
		{"429 reset only", cannedResponse{429, map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": reset}, `{"message":"throttled"}`}, nil, true},
		{"502", cannedResponse{502, nil, `<html>bad gateway</html>`}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, p := newGitLabForTest(t)
			f.failNext(tt.resp)
			err := p.Post(context.Background(), sha40, Entry{Context: "c", State: StateSuccess})
			checkErr(t, err, tt.target, tt.rate)
			if tt.name == "422" && !strings.Contains(err.Error(), "maximum is 255") {
				t.Errorf("422 should carry GitLab's message: %v", err)
			}
			f.failNext(tt.resp)
			_, err = p.List(context.Background(), sha40)
			checkErr(t, err, tt.target, tt.rate)
		})
	}
}

func TestNewProviderRejectsBadSpecs(t *testing.T) {
	bad := []v1alpha1.CommitStatusSpec{
		{Provider: "bitbucket", Repository: "a/b"},
		{Provider: "github", Repository: "noslash"},
		{Provider: "github", Repository: "a/b/c"},
		{Provider: "gitea", Repository: "a/b"}, // gitea needs an address
		{Provider: "gitlab", Repository: ""},
	}
	for _, spec := range bad {
		if _, err := NewProvider(spec, "t", Options{}); err == nil {
			t.Errorf("NewProvider(%+v) succeeded", spec)
		}
	}
	if _, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: "gitlab", Repository: "42"}, "t", Options{}); err != nil {
		t.Errorf("numeric GitLab project id: %v", err)
	}
}

func TestGitLabDoesNotFollowRedirectsWithTheToken(t *testing.T) {
	var leaked bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("PRIVATE-TOKEN") != ""
	}))
	defer other.Close()
	f, p := newGitLabForTest(t)
	f.failNext(cannedResponse{301, map[string]string{"Location": other.URL + "/api/v4/x"}, ""})
	err := p.Post(context.Background(), sha40, Entry{Context: "c", State: StateSuccess})
	if err == nil || leaked || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("err = %v, token sent to the redirect target: %v", err, leaked)
	}
}
