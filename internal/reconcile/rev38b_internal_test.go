package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/redact"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/status"
)

// rev38bForge is a GitHub statuses API that keeps what was posted.
type rev38bForge struct {
	mu    sync.Mutex
	posts []string // state of each POST, in order
	last  map[string]map[string]any
	code  int // answer to POST when non-zero
}

func (f *rev38bForge) serve(t *testing.T) *httptest.Server {
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
			if f.code != 0 {
				w.WriteHeader(f.code)
				_, _ = w.Write([]byte(`{"message":"Validation Failed"}`))
				return
			}
			var s map[string]any
			_ = json.NewDecoder(r.Body).Decode(&s)
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

type rev38bReviews struct {
	prs        []status.PullRequest
	err        error
	during     func()
	commentErr error
	comments   int
}

func (r *rev38bReviews) PullRequests(context.Context, string, int) ([]status.PullRequest, error) {
	if r.during != nil {
		r.during()
	}
	return r.prs, r.err
}
func (r *rev38bReviews) UpsertComment(context.Context, int64, int64, string, string) (int64, error) {
	if err := r.commentErr; err != nil {
		r.commentErr = nil
		return 0, err
	}
	r.comments++
	return 1, nil
}

func rev38bSetup(t *testing.T, forgeURL string, rv *rev38bReviews, ann map[string]string) (*PullRequestReconciler, client.Client) {
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

var rev38bReq = ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "a", Name: "repo"}}

// TestRev38bAPlanLostToAConflictIsPostedAgain: a plan request (the
// pull-request webhook's annotation) or any other write to the
// GitRepository while a pass runs makes the pass's optimistic-lock status
// patch conflict; everything it planned is dropped, and the next pass
// plans and posts the same head again (pending over the verdict the
// forge already shows, then the verdict): the head flips on the forge and
// is planned more than once per SHA. The sync rebases its status on such
// a conflict (rebaseStatus); the planner does not.
func TestRev38bAPlanLostToAConflictIsPostedAgain(t *testing.T) {
	f := &rev38bForge{}
	srv := f.serve(t)
	sha := strings.Repeat("a", 40)
	rv := &rev38bReviews{prs: []status.PullRequest{{Number: 1, HeadSHA: sha, HeadRef: "refs/pull/1/head"}}}
	r, c := rev38bSetup(t, srv.URL, rv, nil)
	rv.during = func() { // the webhook's plan request lands mid-pass
		rv.during = nil
		gr := &v1alpha1.GitRepository{}
		require.NoError(t, c.Get(context.Background(), rev38bReq.NamespacedName, gr))
		gr.Annotations = map[string]string{v1alpha1.PlanRequestedAtAnnotation: "t1"}
		require.NoError(t, c.Update(context.Background(), gr))
	}
	_, err := r.Reconcile(context.Background(), rev38bReq)
	t.Logf("first pass: %v; posts %v", err, f.posts)
	_, err = r.Reconcile(context.Background(), rev38bReq)
	require.NoError(t, err)
	t.Logf("second pass posts %v", f.posts)
	assert.Equal(t, []string{"pending", "failure"}, f.posts, "one head SHA is planned and posted once")
}

// TestRev38bAFailedListingDoesNotAcknowledgeThePlanRequest: the listing
// fails (forge down), nothing is planned, yet status.lastHandledPlanAt
// says the request was handled ("the pull requests were listed, and their
// new heads planned, after it was set").
func TestRev38bAFailedListingDoesNotAcknowledgeThePlanRequest(t *testing.T) {
	f := &rev38bForge{}
	srv := f.serve(t)
	rv := &rev38bReviews{err: errors.New("forge down")}
	r, c := rev38bSetup(t, srv.URL, rv, map[string]string{v1alpha1.PlanRequestedAtAnnotation: "t1"})
	_, err := r.Reconcile(context.Background(), rev38bReq)
	require.Error(t, err)
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, c.Get(context.Background(), rev38bReq.NamespacedName, gr))
	assert.Empty(t, gr.Status.LastHandledPlanAt, "a request whose listing failed is not handled")
}

// TestRev38bARefusedVerdictReplansEveryTenSecondsForever: the forge
// refuses statuses with a lasting 4xx (422 here, on every post; 403 for a
// token without the status scope): each pass lists again and tries every
// such head again, requeued after forgeRetry with a nil error, so the
// rate limiter never backs off. When only the verdict is refused, each
// pass also re-fetches, re-renders and re-dry-runs the head.
func TestRev38bARefusedVerdictReplansEveryTenSecondsForever(t *testing.T) {
	f := &rev38bForge{}
	srv := f.serve(t)
	rv := &rev38bReviews{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("b", 40), HeadRef: "refs/pull/1/head"}}}
	r, _ := rev38bSetup(t, srv.URL, rv, nil)
	f.code = http.StatusUnprocessableEntity
	var last ctrl.Result
	for range 5 {
		res, err := r.Reconcile(context.Background(), rev38bReq)
		require.NoError(t, err)
		last = res
	}
	assert.Greater(t, last.RequeueAfter, forgeRetry, "a lasting refusal backs off")
}

// TestRev38bDuplicateRefNumbersChurn: refPattern refs/heads/pr-* with
// branches pr-5 and pr-05 (or refs/pull/+5/head) are both pull request 5;
// each pass plans one over the other, every pass, forever.
func TestRev38bDuplicateRefNumbersChurn(t *testing.T) {
	heads := matchRefs(map[string]string{"refs/heads/pr-5": strings.Repeat("1", 40), "refs/heads/pr-05": strings.Repeat("2", 40),
		"refs/heads/pr-+5": strings.Repeat("3", 40)}, "refs/heads/pr-*")
	assert.Len(t, heads, 1, "one head per number: %v", heads)
}

// TestRev38bATransientFetchFailureIsAPermanentFailedPlan: the head's fetch
// fails for a passing reason (git server unreachable; likewise a worker
// busy past the fetch's timeout, an API server hiccup in the dry-run):
// the plan is recorded Failed and posted `failure`, and since a head is
// planned once per SHA it is never planned again — neither by the next
// pass nor by a plan request — until the author pushes.
func TestRev38bATransientFetchFailureIsAPermanentFailedPlan(t *testing.T) {
	f := &rev38bForge{}
	srv := f.serve(t)
	rv := &rev38bReviews{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("c", 40), HeadRef: "refs/pull/1/head"}}}
	r, c := rev38bSetup(t, srv.URL, rv, nil)
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, c.Get(context.Background(), rev38bReq.NamespacedName, gr))
	gr.Spec.URL = "http://127.0.0.1:1/unreachable.git" // connection refused: the git server is down for a moment
	require.NoError(t, c.Update(context.Background(), gr))
	_, err := r.Reconcile(context.Background(), rev38bReq)
	require.NoError(t, err)
	require.NoError(t, c.Get(context.Background(), rev38bReq.NamespacedName, gr))
	t.Logf("plan: %+v, posts %v", gr.Status.PullRequests, f.posts)
	// The server is back; a plan request comes (webhook or CLI).
	gr.Annotations = map[string]string{v1alpha1.PlanRequestedAtAnnotation: "t2"}
	require.NoError(t, c.Update(context.Background(), gr))
	_, err = r.Reconcile(context.Background(), rev38bReq)
	require.NoError(t, err)
	assert.Greater(t, len(f.posts), 2, "a plan that failed for a passing reason is planned again (posts %v)", f.posts)
}

// TestRev38bACommentRefusedOnceIsNeverWritten: the comment call fails for
// a passing reason (a 502, a secondary rate limit, the namespace's forge
// budget spent by the statuses just posted); the head's plan is recorded
// done all the same, so the comment is never written for this head: the
// PR keeps showing the previous head's report under the new head's status.
func TestRev38bACommentRefusedOnceIsNeverWritten(t *testing.T) {
	f := &rev38bForge{}
	srv := f.serve(t)
	rv := &rev38bReviews{prs: []status.PullRequest{{Number: 1, HeadSHA: strings.Repeat("d", 40), HeadRef: "refs/pull/1/head"}},
		commentErr: errors.New("github comment on #1: HTTP 502 Bad Gateway")}
	r, _ := rev38bSetup(t, srv.URL, rv, nil)
	for range 2 {
		_, err := r.Reconcile(context.Background(), rev38bReq)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, rv.comments, "the refused comment is written at a later pass")
}
