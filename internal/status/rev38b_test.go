package status

import (
	"context"
	"net/http"
	"testing"
)

// TestRev38bGitHubAppTokenCanComment: a GitHub App installation token may
// comment on pull requests but GET /user answers 403 "Resource not
// accessible by integration". The plan comment must still be written
// (the design: "where the token allows"); today UpsertComment fails before
// it lists or creates anything, on every head.
func TestRev38bGitHubAppTokenCanComment(t *testing.T) {
	f, th, rv := newGitHubReviewsForTest(t)
	f.failNext(cannedResponse{code: http.StatusForbidden,
		body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/users/users#get-the-authenticated-user"}`})
	id, err := rv.UpsertComment(context.Background(), 7, 0, "<!-- m -->", "<!-- m -->\nplan")
	if err != nil {
		t.Fatalf("UpsertComment with an App token: %v (no comment is ever written)", err)
	}
	if id == 0 || len(th.list(7)) != 1 {
		t.Fatalf("want one comment created, got id %d, comments %v", id, th.list(7))
	}
}
