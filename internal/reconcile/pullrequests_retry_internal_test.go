/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pullrequests_retry_internal_test.go: the planner's passes against a
// GitHub statuses API (httptest) and a stand-in pull-request listing —
// what a pass saves over a concurrent write, what it retries and how soon.
// A fake client stands in for the API server where a write must land in
// the middle of a pass.

package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/redact"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/status"
)

// prForge is a GitHub statuses API that keeps what was posted.
type prForge struct {
	mu    sync.Mutex
	posts []string // state of each POST taken, in order
	tried []string // state of each POST, taken or refused
	last  map[string]map[string]any
	code  int // answer to POST when non-zero
}

func (f *prForge) serve(t *testing.T) *httptest.Server {
	f.last = map[string]map[string]any{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/commits/"):
			var ss []map[string]any
			for _, s := range f.last {
				ss = append(ss, s)
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"state": "pending", "statuses": ss})
		case r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/statuses/"):
			var s map[string]any
			_ = json.NewDecoder(r.Body).Decode(&s)
			f.tried = append(f.tried, s["state"].(string))
			if f.code != 0 {
				w.WriteHeader(f.code)
				_, _ = w.Write([]byte(`{"message":"Validation Failed"}`))
				return
			}
			f.posts = append(f.posts, s["state"].(string))
			f.last[s["context"].(string)] = s
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(s)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"Not Found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

type prListing struct {
	prs        []status.PullRequest
	err        error
	during     func()
	commentErr error
	comments   int
}

func (r *prListing) PullRequests(context.Context, string, int) ([]status.PullRequest, error) {
	if r.during != nil {
		r.during()
	}
	return r.prs, r.err
}
func (r *prListing) UpsertComment(context.Context, int64, status.CommentRef, string, string) (status.CommentRef, error) {
	if err := r.commentErr; err != nil {
		r.commentErr = nil
		return status.CommentRef{}, err
	}
	r.comments++
	return status.CommentRef{ID: 1, Author: 2}, nil
}

func prSetup(t *testing.T, forgeURL string, rv *prListing, ann map[string]string) (*PullRequestReconciler, client.Client) {
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "repo", Annotations: ann},
		Spec: v1alpha1.GitRepositorySpec{URL: "file:///nonexistent/repo", Ref: &v1alpha1.GitRepositoryRef{Branch: "main"},
			PullRequests: &v1alpha1.PullRequestsSpec{},
			CommitStatus: &v1alpha1.CommitStatusSpec{Provider: "github", Address: forgeURL,
				Repository: "org/repo", SecretRef: v1alpha1.LocalObjectReference{Name: "forge"}}}}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "forge"}, Data: map[string][]byte{"token": []byte("t")}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(gr, token).WithStatusSubresource(&v1alpha1.GitRepository{}).Build()
	cache, err := source.NewCache(t.TempDir(), 0)
	require.NoError(t, err)
	reg := redact.NewRegistry()
	r := &PullRequestReconciler{Client: c, Reader: c, Redact: reg, Cache: cache, AllowInsecureHTTP: true,
		Commit:     &CommitStatusReporter{Client: c, Redact: reg, AllowInsecureHTTP: true},
		NewReviews: func(v1alpha1.CommitStatusSpec, string, status.Options) (status.Reviews, error) { return rv, nil }}
	return r, c
}

var prReq = ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "a", Name: "repo"}}

// TestAPlanIsSavedOverAWriteMadeDuringItsPass: a plan request (the
// pull-request webhook's annotation, made before the head's verdict) or
// any other write to the GitRepository while a pass runs makes the pass's
// optimistic-lock status patch conflict; the plan is saved over it all
// the same (rebased, as the sync's rebaseStatus does), so the next pass
// neither plans nor posts the head again: one head SHA, one pending, one
// verdict on the forge.
func TestAPlanIsSavedOverAWriteMadeDuringItsPass(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	sha := strings.Repeat("a", 40)
	rv := &prListing{prs: []status.PullRequest{{Number: 1, HeadSHA: sha, HeadRef: "refs/pull/1/head"}}}
	r, c := prSetup(t, srv.URL, rv, nil)
	rv.during = func() { // the webhook's plan request lands mid-pass
		rv.during = nil
		gr := &v1alpha1.GitRepository{}
		require.NoError(t, c.Get(context.Background(), prReq.NamespacedName, gr))
		gr.Annotations = map[string]string{v1alpha1.PlanRequestedAtAnnotation: time.Now().UTC().Format(time.RFC3339Nano)}
		require.NoError(t, c.Update(context.Background(), gr))
	}
	_, err := r.Reconcile(context.Background(), prReq)
	t.Logf("first pass: %v; posts %v", err, f.posts)
	_, err = r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	t.Logf("second pass posts %v", f.posts)
	assert.Equal(t, []string{"pending", "failure"}, f.posts, "one head SHA is planned and posted once")
}

// TestAFailedListingLeavesThePlanRequestUnhandled: the listing fails
// (forge down), nothing is planned, so status.lastHandledPlanAt does not
// take the request ("the pull requests were listed, and their new heads
// planned, after it was set").
func TestAFailedListingLeavesThePlanRequestUnhandled(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	rv := &prListing{err: errors.New("forge down")}
	r, c := prSetup(t, srv.URL, rv, map[string]string{v1alpha1.PlanRequestedAtAnnotation: "t1"})
	_, err := r.Reconcile(context.Background(), prReq)
	require.Error(t, err)
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, c.Get(context.Background(), prReq.NamespacedName, gr))
	assert.Empty(t, gr.Status.LastHandledPlanAt, "a request whose listing failed is not handled")
}

// TestALastingStatusRefusalBacksOffAndRepostsOnlyTheVerdict: the forge
// refuses statuses with a lasting 4xx (422 here, on every post; 403 for a
// token without the status scope): each pass comes later than the one
// before (up to the interval), and tries only the verdict again, never
// planning the head again (no second "pending").
func TestALastingStatusRefusalBacksOffAndRepostsOnlyTheVerdict(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	rv := &prListing{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("b", 40), HeadRef: "refs/pull/1/head"}}}
	r, _ := prSetup(t, srv.URL, rv, nil)
	f.code = http.StatusUnprocessableEntity
	var last ctrl.Result
	for range 5 {
		res, err := r.Reconcile(context.Background(), prReq)
		require.NoError(t, err)
		last = res
	}
	assert.Greater(t, last.RequeueAfter, forgeRetry, "a lasting refusal backs off")
	assert.Equal(t, []string{"pending", "failure", "failure", "failure", "failure", "failure"}, f.tried,
		"the verdict is posted again, the head not planned again")
}

// TestRefPatternTakesOnlyCanonicalNumbers: refPattern refs/heads/pr-*
// with branches pr-5, pr-05 and pr-+5: only pr-5 is pull request 5, else
// each pass would plan one over the other, forever.
func TestRefPatternTakesOnlyCanonicalNumbers(t *testing.T) {
	heads := matchRefs(map[string]string{"refs/heads/pr-5": strings.Repeat("1", 40), "refs/heads/pr-05": strings.Repeat("2", 40),
		"refs/heads/pr-+5": strings.Repeat("3", 40)}, "refs/heads/pr-*")
	require.Len(t, heads, 1, "one head per number: %v", heads)
	assert.Equal(t, "refs/heads/pr-5", heads[0].HeadRef)
}

// TestATransientFetchFailureStaysPendingAndIsPlannedAgain: the head's
// fetch fails for a passing reason (git server unreachable; likewise a
// worker busy past the fetch's timeout, an API server hiccup in the
// dry-run): the plan stays Pending, `pending` "retrying: …" on the forge,
// never `failure`, and the head is planned again at the next pass.
func TestATransientFetchFailureStaysPendingAndIsPlannedAgain(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	rv := &prListing{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("c", 40), HeadRef: "refs/pull/1/head"}}}
	r, c := prSetup(t, srv.URL, rv, nil)
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, c.Get(context.Background(), prReq.NamespacedName, gr))
	gr.Spec.URL = "http://127.0.0.1:1/unreachable.git" // connection refused: the git server is down for a moment
	require.NoError(t, c.Update(context.Background(), gr))
	_, err := r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	require.NoError(t, c.Get(context.Background(), prReq.NamespacedName, gr))
	t.Logf("plan: %+v, posts %v", gr.Status.PullRequests, f.posts)
	require.Len(t, gr.Status.PullRequests, 1)
	assert.Equal(t, v1alpha1.PlanPending, gr.Status.PullRequests[0].Outcome)
	assert.Contains(t, gr.Status.PullRequests[0].Summary, "retrying: ")
	assert.NotContains(t, f.posts, "failure", "a passing failure is no verdict")
	// The server is back; a plan request comes (webhook or CLI).
	gr.Annotations = map[string]string{v1alpha1.PlanRequestedAtAnnotation: time.Now().UTC().Format(time.RFC3339Nano)}
	require.NoError(t, c.Update(context.Background(), gr))
	_, err = r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	assert.Greater(t, len(f.posts), 2, "a plan that failed for a passing reason is planned again (posts %v)", f.posts)
}

// TestARefusedCommentIsWrittenAtALaterPassWithoutPlanningAgain: the
// comment call fails for a passing reason (a 502, a secondary rate limit,
// the namespace's forge budget spent by the statuses just posted); a
// later pass writes it for this head, without planning the head again
// (one pending, one verdict on the forge).
func TestARefusedCommentIsWrittenAtALaterPassWithoutPlanningAgain(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	rv := &prListing{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("d", 40), HeadRef: "refs/pull/1/head"}},
		commentErr: errors.New("github comment on #1: HTTP 502 Bad Gateway")}
	r, _ := prSetup(t, srv.URL, rv, nil)
	for range 2 {
		_, err := r.Reconcile(context.Background(), prReq)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, rv.comments, "the refused comment is written at a later pass")
	assert.Equal(t, []string{"pending", "failure"}, f.posts, "the head is not planned again")
}

// TestRemovingSpecPullRequestsRemovesTheHeadsCheckout: once
// spec.pullRequests is removed, the heads' cache directory (beside the
// sync's) and the plans go; nothing keeps the disk of a planner that
// plans nothing.
func TestRemovingSpecPullRequestsRemovesTheHeadsCheckout(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	rv := &prListing{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("e", 40), HeadRef: "refs/pull/1/head"}}}
	r, c := prSetup(t, srv.URL, rv, nil)
	_, err := r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	k := pullsKey(prReq.NamespacedName)
	// What a fetch and render of a head leave (this one's URL is refused
	// before): a checkout, and the values of its Secrets.
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"namespace": "a", "name": "creds"}, "stringData": map[string]any{"password": "hunter2-head"}}}
	r.Redact.NoteRendered(k, []*unstructured.Unstructured{secret})
	require.Equal(t, "***", r.scrubber(&v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "repo"}}).Scrub("hunter2-head"))
	require.NoError(t, os.MkdirAll(r.Cache.Dir(k.Namespace, k.Name), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(r.Cache.Dir(k.Namespace, k.Name), "HEAD"), []byte("x"), 0o600))
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, c.Get(context.Background(), prReq.NamespacedName, gr))
	require.NotEmpty(t, gr.Status.PullRequests)
	gr.Spec.PullRequests = nil
	require.NoError(t, c.Update(context.Background(), gr))
	_, err = r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	assert.NoDirExists(t, r.Cache.Dir(k.Namespace, k.Name))
	assert.Equal(t, "hunter2-head", r.Redact.ForSource(k).Scrub("hunter2-head"), "the heads' Secret record is dropped")
	require.NoError(t, c.Get(context.Background(), prReq.NamespacedName, gr))
	assert.Empty(t, gr.Status.PullRequests)
}

// TestAHeadTheForgeNamesWithoutACommitIsSkipped: a listing whose head is
// no full SHA (a branch name, a short SHA) is skipped: it could never be
// fetched, and would be tried again at every pass.
func TestAHeadTheForgeNamesWithoutACommitIsSkipped(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	rv := &prListing{prs: []status.PullRequest{{Number: 1, HeadSHA: "main", HeadRef: "refs/pull/1/head"},
		{Number: 2, HeadSHA: strings.Repeat("A", 40), HeadRef: "refs/pull/2/head"}}}
	r, c := prSetup(t, srv.URL, rv, nil)
	res, err := r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	assert.Empty(t, f.tried, "nothing is posted for a head that is no commit")
	assert.Greater(t, res.RequeueAfter, forgeRetry, "nothing to retry")
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, c.Get(context.Background(), prReq.NamespacedName, gr))
	assert.Empty(t, gr.Status.PullRequests)
}

// TestThePlannerTakesItsNamespacesWorkerSlot: the planner takes the
// sync's per-namespace slots: while the namespace holds all it may, its
// heads wait (requeued, nothing fetched or posted), and other namespaces
// keep their workers.
func TestThePlannerTakesItsNamespacesWorkerSlot(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	rv := &prListing{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("f", 40), HeadRef: "refs/pull/1/head"}}}
	r, _ := prSetup(t, srv.URL, rv, nil)
	r.Slots = newNamespaceSlots(4, 1)
	release, ok := r.Slots.acquire(client.ObjectKey{Namespace: "a", Name: "other"})
	require.True(t, ok)
	res, err := r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	assert.Equal(t, busyRetry, res.RequeueAfter)
	assert.Empty(t, f.tried, "no head is planned without a slot")
	release()
	_, err = r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	assert.NotEmpty(t, f.tried, "with a slot the head is planned")
}

// TestAFailedVerdictIsFinalUntilARequestAfterIt: a head whose own verdict
// is Failed (here: its URL is refused) is not planned again by the next
// pass, nor by a plan request made before the verdict; a request made
// after it plans the head again.
func TestAFailedVerdictIsFinalUntilARequestAfterIt(t *testing.T) {
	f := &prForge{}
	srv := f.serve(t)
	rv := &prListing{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("9", 40), HeadRef: "refs/pull/1/head"}}}
	earlier := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	r, c := prSetup(t, srv.URL, rv, map[string]string{v1alpha1.PlanRequestedAtAnnotation: earlier})
	for range 2 {
		_, err := r.Reconcile(context.Background(), prReq)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"pending", "failure"}, f.posts, "a verdict is final for its SHA")
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, c.Get(context.Background(), prReq.NamespacedName, gr))
	require.Equal(t, v1alpha1.PlanFailed, gr.Status.PullRequests[0].Outcome)
	gr.Annotations[v1alpha1.PlanRequestedAtAnnotation] = gr.Status.PullRequests[0].Time.Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	require.NoError(t, c.Update(context.Background(), gr))
	_, err := r.Reconcile(context.Background(), prReq)
	require.NoError(t, err)
	assert.Equal(t, []string{"pending", "failure", "pending", "failure"}, f.posts, "a request after the verdict plans again")
}
