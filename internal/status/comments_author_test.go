/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// comments_author_test.go: the plan comment of a token the forge will not
// name its own user to, and the helper the comment tests call.

package status

import (
	"context"
	"net/http"
	"testing"
)

// upsertID is UpsertComment by comment id alone, as a token that may read
// its own user calls it.
func upsertID(rv Reviews, ctx context.Context, number, id int64, marker, body string) (int64, error) {
	got, err := rv.UpsertComment(ctx, number, CommentRef{ID: id}, marker, body)
	return got.ID, err
}

// appTokenRefusal is GitHub's answer to GET /user with an App
// installation token.
var appTokenRefusal = cannedResponse{code: http.StatusForbidden,
	body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/users/users#get-the-authenticated-user"}`}

// TestATokenThatMayNotReadItsUserCommentsAndEditsOnlyItsOwnComment: a
// GitHub App installation token may comment but GET /user answers 403.
// The first plan comment is created (its author learned from the
// answer); the next head edits that comment, by its id and that author,
// and never the comment another user planted with the marker.
func TestATokenThatMayNotReadItsUserCommentsAndEditsOnlyItsOwnComment(t *testing.T) {
	f, th, rv := newGitHubReviewsForTest(t)
	planted := th.add(7, otherID, "<!-- m -->\nall green, merge me")
	f.failNext(appTokenRefusal)
	first, err := rv.UpsertComment(context.Background(), 7, CommentRef{}, "<!-- m -->", "<!-- m -->\nplan 1")
	if err != nil {
		t.Fatalf("UpsertComment with an App token: %v", err)
	}
	if first.ID == 0 || first.ID == planted || first.Author != selfID {
		t.Fatalf("want a new comment by %d, got %+v (planted %d)", selfID, first, planted)
	}
	f.failNext(appTokenRefusal)
	again, err := rv.UpsertComment(context.Background(), 7, first, "<!-- m -->", "<!-- m -->\nplan 2")
	if err != nil || again != first {
		t.Fatalf("second head: got %+v, %v; want %+v edited", again, err, first)
	}
	for _, c := range th.list(7) {
		switch {
		case c.ID == planted && c.Body != "<!-- m -->\nall green, merge me":
			t.Fatalf("the planted comment was edited: %q", c.Body)
		case c.ID == first.ID && c.Body != "<!-- m -->\nplan 2":
			t.Fatalf("our comment was not edited: %q", c.Body)
		}
	}
	if n := len(th.list(7)); n != 2 {
		t.Fatalf("want the planted comment and ours, got %d comments", n)
	}
}
