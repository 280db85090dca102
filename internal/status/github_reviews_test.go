/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// githubReviewsAPI implements, as documented, GET /user ("Get the
// authenticated user"), GET /repos/{o}/{r}/pulls ("List pull requests"),
// GET and POST /repos/{o}/{r}/issues/{n}/comments ("List issue comments",
// "Create an issue comment") and PATCH /repos/{o}/{r}/issues/comments/{id}
// ("Update an issue comment").
func githubReviewsAPI(th *fakeThreads, pulls []map[string]any) func(*fakeForge, http.ResponseWriter, *http.Request) {
	return func(f *fakeForge, w http.ResponseWriter, r *http.Request) {
		if !githubHeadersOK(f, w, r) {
			return
		}
		repo := f.prefix + "/repos/" + f.project
		switch path := r.URL.Path; {
		case path == f.prefix+"/user" && r.Method == http.MethodGet:
			th.readSelf()
			writeJSON(w, http.StatusOK, map[string]any{"id": selfID, "login": selfLogin})
		case path == repo+"/pulls" && r.Method == http.MethodGet:
			githubPulls(f, w, r, pulls)
		case strings.HasPrefix(path, repo+"/issues/comments/") && r.Method == http.MethodPatch:
			githubEditComment(f, w, r, th, strings.TrimPrefix(path, repo+"/issues/comments/"))
		case strings.HasPrefix(path, repo+"/issues/") && strings.HasSuffix(path, "/comments"):
			githubComments(f, w, r, th, strings.TrimSuffix(strings.TrimPrefix(path, repo+"/issues/"), "/comments"))
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		}
	}
}

func githubPulls(f *fakeForge, w http.ResponseWriter, r *http.Request, pulls []map[string]any) {
	want := url.Values{"state": {"open"}, "base": {"main"}, "sort": {"updated"}, "direction": {"desc"}, "per_page": {"5"}}
	if got := r.URL.Query().Encode(); got != want.Encode() {
		f.fail(w, "list pulls query %s, want %s", got, want.Encode())
		return
	}
	writeJSON(w, http.StatusOK, pulls)
}

func githubComments(f *fakeForge, w http.ResponseWriter, r *http.Request, th *fakeThreads, number string) {
	n, err := strconv.ParseInt(number, 10, 64)
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	if r.Method == http.MethodPost {
		githubCreateComment(f, w, r, th, n)
		return
	}
	if q := r.URL.Query(); q.Get("per_page") != "100" {
		f.fail(w, "list comments query %s, want per_page=100", q.Encode())
		return
	}
	var items []map[string]any
	for _, c := range th.list(n) {
		items = append(items, githubComment(c))
	}
	chunk, next := page(items, r)
	if next > 0 {
		u := *r.URL
		q := u.Query()
		q.Set("page", strconv.Itoa(next))
		u.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, u.RequestURI()))
	}
	writeJSON(w, http.StatusOK, chunk)
}

func githubComment(c fakeComment) map[string]any {
	login := selfLogin
	if c.Author != selfID {
		login = otherLogin
	}
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"id": c.Author, "login": login}}
}

// githubCommentBody decodes {"body": …}; GitHub takes 65,536 characters.
func githubCommentBody(f *fakeForge, w http.ResponseWriter, r *http.Request) (string, bool) {
	var body struct {
		Body string `json:"body"`
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.fail(w, "Content-Type = %q", ct)
		return "", false
	}
	if err := decodeStrict(r, &body); err != nil || body.Body == "" {
		f.fail(w, "comment body: %v", err)
		return "", false
	}
	if runeLen(body.Body) > 65536 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Body is too long (maximum is 65536 characters)"})
		return "", false
	}
	return body.Body, true
}

func githubCreateComment(f *fakeForge, w http.ResponseWriter, r *http.Request, th *fakeThreads, n int64) {
	if body, ok := githubCommentBody(f, w, r); ok {
		id := th.add(n, selfID, body)
		writeJSON(w, http.StatusCreated, githubComment(fakeComment{ID: id, Author: selfID, Body: body}))
	}
}

// githubEditComment edits any comment, as a repository admin's token may.
func githubEditComment(f *fakeForge, w http.ResponseWriter, r *http.Request, th *fakeThreads, idText string) {
	id, err := strconv.ParseInt(idText, 10, 64)
	body, ok := githubCommentBody(f, w, r)
	switch {
	case !ok:
	case err != nil || !th.edit(0, id, body):
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	default:
		writeJSON(w, http.StatusOK, githubComment(fakeComment{ID: id, Author: selfID, Body: body}))
	}
}

func newGitHubReviewsForTest(t *testing.T, pulls ...map[string]any) (*fakeForge, *fakeThreads, Reviews) {
	th := newFakeThreads()
	f := newFakeForge(t, "/api/v3", "acme/app", githubReviewsAPI(th, pulls))
	rv, err := NewReviews(v1alpha1.CommitStatusSpec{Provider: "github", Address: f.srv.URL,
		Repository: "acme/app"}, testToken, Options{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, th, rv
}

func githubPR(number int, sha string, headRepo int, labels ...string) map[string]any {
	var ls []map[string]string
	for _, l := range labels {
		ls = append(ls, map[string]string{"name": l})
	}
	return map[string]any{"number": number, "title": fmt.Sprintf("change %d", number), "state": "open",
		"user": map[string]any{"login": "alice"}, "labels": ls,
		"head": map[string]any{"sha": sha, "ref": "feature", "repo": map[string]any{"id": headRepo}},
		"base": map[string]any{"sha": sha40, "ref": "main", "repo": map[string]any{"id": 10}}}
}

func TestGitHubPullRequests(t *testing.T) {
	_, _, rv := newGitHubReviewsForTest(t, githubPR(7, "a7", 10, "deps"), githubPR(3, "a3", 99))
	got, err := rv.PullRequests(context.Background(), "main", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []PullRequest{
		{Number: 7, HeadSHA: "a7", HeadRef: "refs/pull/7/head", Title: "change 7", Author: "alice", Labels: []string{"deps"}},
		{Number: 3, HeadSHA: "a3", HeadRef: "refs/pull/3/head", Title: "change 3", Author: "alice", Fork: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("PullRequests = %+v, want %+v", got, want)
	}
}

func TestGitHubUpsertComment(t *testing.T) {
	_, th, rv := newGitHubReviewsForTest(t)
	checkUpsert(t, rv, th, 7)
	checkCutComment(t, rv, th, 8)
}

func TestGitHubReviewsErrorsNameTheAnswerNotTheToken(t *testing.T) {
	f, _, rv := newGitHubReviewsForTest(t)
	bad := cannedResponse{401, nil, `{"message":"Bad credentials ` + testToken + `"}`}
	f.failNext(bad, bad) // every request: /user, then the comment
	_, err := upsertID(rv, context.Background(), 7, 0, testMarker, "plan")
	checkErr(t, err, ErrUnauthorized, false)
	f.failNext(cannedResponse{404, nil, `{"message":"Not Found"}`})
	_, err = rv.PullRequests(context.Background(), "main", 5)
	checkErr(t, err, ErrNotFound, false)
	if !strings.Contains(err.Error(), "HTTP 404 Not Found") {
		t.Fatalf("error should name the forge's answer: %v", err)
	}
}
