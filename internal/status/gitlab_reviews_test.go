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

// gitlabReviewsAPI implements, as documented in GitLab's REST API v4, GET
// /user, GET /projects/:id/merge_requests ("List project merge
// requests"), GET and POST /projects/:id/merge_requests/:iid/notes ("List
// all merge request notes", "Create new merge request note") and PUT
// /projects/:id/merge_requests/:iid/notes/:note_id ("Modify existing
// merge request note").
func gitlabReviewsAPI(th *fakeThreads, mrs []map[string]any) func(*fakeForge, http.ResponseWriter, *http.Request) {
	return func(f *fakeForge, w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("PRIVATE-TOKEN"); got != testToken {
			f.fail(w, "PRIVATE-TOKEN = %q", got)
			return
		}
		mergeRequests := f.prefix + "/projects/" + f.project + "/merge_requests"
		switch path := r.URL.EscapedPath(); {
		case path == f.prefix+"/user" && r.Method == http.MethodGet:
			th.readSelf()
			writeJSON(w, http.StatusOK, map[string]any{"id": selfID, "username": selfLogin})
		case path == mergeRequests && r.Method == http.MethodGet:
			gitlabMergeRequests(f, w, r, mrs)
		case strings.HasPrefix(path, mergeRequests+"/") && strings.Contains(path, "/notes"):
			gitlabNotes(f, w, r, th, strings.Split(strings.TrimPrefix(path, mergeRequests+"/"), "/"))
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not Found"})
		}
	}
}

func gitlabMergeRequests(f *fakeForge, w http.ResponseWriter, r *http.Request, mrs []map[string]any) {
	want := url.Values{"state": {"opened"}, "target_branch": {"main"}, "order_by": {"updated_at"}, "sort": {"desc"}, "per_page": {"5"}}
	if got := r.URL.Query().Encode(); got != want.Encode() {
		f.fail(w, "list merge requests query %s, want %s", got, want.Encode())
		return
	}
	writeJSON(w, http.StatusOK, mrs)
}

// gitlabNotes serves <iid>/notes and <iid>/notes/<note_id>.
func gitlabNotes(f *fakeForge, w http.ResponseWriter, r *http.Request, th *fakeThreads, parts []string) {
	iid, err := strconv.ParseInt(parts[0], 10, 64)
	switch {
	case err != nil || parts[1] != "notes" || len(parts) > 3:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not Found"})
	case len(parts) == 2 && r.Method == http.MethodGet:
		gitlabListNotes(w, r, th, iid)
	case len(parts) == 2 && r.Method == http.MethodPost:
		if body, ok := gitlabNoteBody(f, w, r); ok {
			id := th.add(iid, selfID, body)
			writeJSON(w, http.StatusCreated, gitlabNoteJSON(fakeComment{ID: id, Author: selfID, Body: body}))
		}
	case len(parts) == 3 && r.Method == http.MethodPut:
		gitlabEditNote(f, w, r, th, iid, parts[2])
	default:
		f.fail(w, "%s %s", r.Method, r.URL.Path)
	}
}

func gitlabListNotes(w http.ResponseWriter, r *http.Request, th *fakeThreads, iid int64) {
	// A system note by the token's user, as GitLab writes on a push.
	items := []map[string]any{{"id": 1, "body": "added 1 commit " + testMarker, "system": true,
		"author": map[string]any{"id": selfID, "username": selfLogin}}}
	for _, c := range th.list(iid) {
		items = append(items, gitlabNoteJSON(c))
	}
	chunk, next := page(items, r)
	if next > 0 {
		w.Header().Set("X-Next-Page", strconv.Itoa(next))
	}
	writeJSON(w, http.StatusOK, chunk)
}

func gitlabNoteJSON(c fakeComment) map[string]any {
	login := selfLogin
	if c.Author != selfID {
		login = otherLogin
	}
	return map[string]any{"id": c.ID, "body": c.Body, "system": false, "noteable_type": "MergeRequest",
		"author": map[string]any{"id": c.Author, "username": login}}
}

// gitlabNoteBody decodes {"body": …}; GitLab takes 1,000,000 characters.
func gitlabNoteBody(f *fakeForge, w http.ResponseWriter, r *http.Request) (string, bool) {
	var body struct {
		Body string `json:"body"`
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.fail(w, "Content-Type = %q", ct)
		return "", false
	}
	if err := decodeStrict(r, &body); err != nil || body.Body == "" {
		f.fail(w, "note body: %v", err)
		return "", false
	}
	if runeLen(body.Body) > 1000000 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": map[string]any{"note": []string{"is too long (maximum is 1000000 characters)"}}})
		return "", false
	}
	return body.Body, true
}

// gitlabEditNote edits any note of the merge request, as a maintainer's
// token may.
func gitlabEditNote(f *fakeForge, w http.ResponseWriter, r *http.Request, th *fakeThreads, iid int64, idText string) {
	id, err := strconv.ParseInt(idText, 10, 64)
	body, ok := gitlabNoteBody(f, w, r)
	switch {
	case !ok:
	case err != nil || !th.edit(iid, id, body):
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
	default:
		writeJSON(w, http.StatusOK, gitlabNoteJSON(fakeComment{ID: id, Author: selfID, Body: body}))
	}
}

func newGitLabReviewsForTest(t *testing.T, mrs ...map[string]any) (*fakeForge, *fakeThreads, Reviews) {
	th := newFakeThreads()
	f := newFakeForge(t, "/api/v4", "group%2Fsub%2Fapp", gitlabReviewsAPI(th, mrs))
	rv, err := NewReviews(v1alpha1.CommitStatusSpec{Provider: "gitlab", Address: f.srv.URL,
		Repository: "group/sub/app"}, testToken, Options{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, th, rv
}

func gitlabMR(iid int, sha string, sourceProject int, labels ...string) map[string]any {
	return map[string]any{"id": 5000 + iid, "iid": iid, "title": fmt.Sprintf("change %d", iid), "state": "opened",
		"sha": sha, "source_branch": "feature", "target_branch": "main", "labels": append([]string{}, labels...),
		"source_project_id": sourceProject, "target_project_id": 10, "author": map[string]any{"id": 7, "username": "alice"}}
}

func TestGitLabPullRequests(t *testing.T) {
	_, _, rv := newGitLabReviewsForTest(t, gitlabMR(7, "a7", 10, "deps"), gitlabMR(3, "a3", 99))
	got, err := rv.PullRequests(context.Background(), "main", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []PullRequest{
		{Number: 7, HeadSHA: "a7", HeadRef: "refs/merge-requests/7/head", Title: "change 7", Author: "alice", Labels: []string{"deps"}},
		{Number: 3, HeadSHA: "a3", HeadRef: "refs/merge-requests/3/head", Title: "change 3", Author: "alice", Labels: []string{}, Fork: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("PullRequests = %+v, want %+v", got, want)
	}
}

func TestGitLabUpsertComment(t *testing.T) {
	_, th, rv := newGitLabReviewsForTest(t)
	checkUpsert(t, rv, th, 7)
	checkCutComment(t, rv, th, 8)
}

func TestGitLabReviewsErrorsNameTheAnswerNotTheToken(t *testing.T) {
	f, _, rv := newGitLabReviewsForTest(t)
	bad := cannedResponse{401, nil, `{"message":"401 Unauthorized ` + testToken + `"}`}
	f.failNext(bad, bad) // every request: /user, then the comment
	_, err := upsertID(rv, context.Background(), 7, 0, testMarker, "plan")
	checkErr(t, err, ErrUnauthorized, false)
	f.failNext(cannedResponse{404, nil, `{"message":"404 Project Not Found"}`})
	_, err = rv.PullRequests(context.Background(), "main", 5)
	checkErr(t, err, ErrNotFound, false)
	if !strings.Contains(err.Error(), "HTTP 404 404 Project Not Found") {
		t.Fatalf("error should name the forge's answer: %v", err)
	}
}
