/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// The control plane starts only when a test needs it, so the git tests run
// without bin/kube-apiserver.
var (
	envOnce sync.Once
	env     *testenv.Env
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		_ = env.Stop()
	}
	os.Exit(code)
}

func kube(t *testing.T) client.Client {
	t.Helper()
	envOnce.Do(func() { env, envErr = testenv.Start(testenv.Options{WithoutFlinkCRDs: true}) })
	testenv.Require(t, envErr)
	return env.Client
}

const hookToken = "hook-s3cret-token"

// hookFixture is a namespace with a GitRepository watching branch main
// and its webhook Secret, behind a Receiver on a real HTTP server.
type hookFixture struct {
	c    client.Client
	gr   *v1alpha1.GitRepository
	url  string
	path string
}

func newHookFixture(t *testing.T, ref v1alpha1.GitRepositoryRef) *hookFixture {
	t.Helper()
	c := kube(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "hook-"}}
	require.NoError(t, c.Create(ctx, ns))
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "hook"},
		Data: map[string][]byte{WebhookTokenKey: []byte(hookToken)}}
	require.NoError(t, c.Create(ctx, sec))
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "app"},
		Spec: v1alpha1.GitRepositorySpec{URL: "https://example.com/app.git", Ref: &ref,
			Webhook: &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "hook"}}},
	}
	require.NoError(t, c.Create(ctx, gr))
	gr.Status.WebhookPath = WebhookPath([]byte(hookToken), ns.Name, gr.Name)
	require.NoError(t, c.Status().Update(ctx, gr))

	// Many requests on one path: no per-path limit here (TestReceiverRateLimitsEachPath).
	rc := &Receiver{Client: c, MaxBodyBytes: 4096, Log: testr.New(t), Limits: ReceiverLimits{PathRate: -1}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return &hookFixture{c: c, gr: gr, url: srv.URL, path: gr.Status.WebhookPath}
}

func (f *hookFixture) annotation(t *testing.T) string {
	t.Helper()
	var gr v1alpha1.GitRepository
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKeyFromObject(f.gr), &gr))
	return gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
}

type hookRequest struct {
	method, path string
	h            http.Header
	body         string
}

func (f *hookFixture) do(t *testing.T, r hookRequest) (int, string) {
	t.Helper()
	req, err := http.NewRequest(r.method, f.url+r.path, strings.NewReader(r.body))
	require.NoError(t, err)
	for k, v := range r.h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = fmt.Fprint(&b, resp.Status)
	return resp.StatusCode, b.String()
}

func TestReceiver(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	// Every delivery that must trigger has a body of its own: the same
	// signed body again is a replay (TestReceiverReplay).
	pushes := 0
	push := func(ref string) string {
		pushes++
		return fmt.Sprintf(`{"ref":%q,"after":"%s","n":%d}`, ref, sha, pushes)
	}
	main, main2, main3, dev := push("refs/heads/main"), push("refs/heads/main"), push("refs/heads/main"), push("refs/heads/dev")
	github := func(body, token string) http.Header {
		return headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(token, body))
	}
	gitea := func(body, token string) http.Header {
		return headers(GiteaEventHeader, "push", GitHubEventHeader, "push", GiteaSignatureHeader, sign(token, body),
			GitHubSignatureHeader, "sha256="+sign(token, body))
	}
	gitlab := func(token string) http.Header {
		return headers(GitLabEventHeader, "Push Hook", GitLabTokenHeader, token)
	}
	big := `{"ref":"refs/heads/main","pad":"` + strings.Repeat("x", 5000) + `"}`

	for _, tc := range []struct {
		name    string
		req     hookRequest
		code    int
		trigger bool
	}{
		{"github push", hookRequest{"POST", f.path, github(main, hookToken), main}, 200, true},
		{"gitea push", hookRequest{"POST", f.path, gitea(main2, hookToken), main2}, 200, true},
		{"gitlab push", hookRequest{"POST", f.path, gitlab(hookToken), main3}, 200, true},
		{"github bad signature", hookRequest{"POST", f.path, github(main, "guess"), main}, 401, false},
		{"gitea bad signature", hookRequest{"POST", f.path, gitea(main, "guess"), main}, 401, false},
		{"gitlab bad token", hookRequest{"POST", f.path, gitlab("guess"), main}, 401, false},
		{"body tampered", hookRequest{"POST", f.path, github(dev, hookToken), main}, 401, false},
		{"no signature", hookRequest{"POST", f.path, headers(GitHubEventHeader, "push"), main}, 401, false},
		{"oversized body", hookRequest{"POST", f.path, github(big, hookToken), big}, 413, false},
		{"wrong event type", hookRequest{"POST", f.path, headers(GitHubEventHeader, "issues", GitHubSignatureHeader, "sha256="+sign(hookToken, main)), main}, 400, false},
		{"bad payload", hookRequest{"POST", f.path, github("{", hookToken), "{"}, 400, false},
		{"push to another branch", hookRequest{"POST", f.path, github(dev, hookToken), dev}, 202, false},
		{"unknown path", hookRequest{"POST", "/hook/" + strings.Repeat("0", 64), github(main, hookToken), main}, 404, false},
		{"outside /hook/", hookRequest{"POST", "/other", github(main, hookToken), main}, 404, false},
		{"wrong method", hookRequest{"GET", f.path, github(main, hookToken), main}, 405, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearAnnotation(t, f)
			code, status := f.do(t, tc.req)
			assert.Equal(t, tc.code, code, status)
			got := f.annotation(t)
			if !tc.trigger {
				assert.Empty(t, got, "no side effect")
				return
			}
			at, err := time.Parse(time.RFC3339Nano, got)
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now(), at, time.Minute)
		})
	}
}

func TestReceiverTagAndSemverRefs(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{SemVer: ">=1.0.0"})
	body := `{"ref":"refs/tags/v1.3.0"}`
	code, _ := f.do(t, hookRequest{"POST", f.path, headers(GitLabEventHeader, "Tag Push Hook", GitLabTokenHeader, hookToken), body})
	assert.Equal(t, 200, code)
	assert.NotEmpty(t, f.annotation(t))
}

// clearAnnotation removes the reconcile annotation with a merge patch.
func clearAnnotation(t *testing.T, f *hookFixture) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.ReconcileRequestedAtAnnotation + `":null}}}`)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: f.gr.Namespace, Name: f.gr.Name}}
	require.NoError(t, f.c.Patch(context.Background(), gr, client.RawPatch("application/merge-patch+json", patch)))
}

// TestReceiverIndexed runs the Receiver as a manager would: a cached
// client with WebhookPathIndex registered. It also checks that nothing
// logged, at any verbosity, holds the token.
func TestReceiverIndexed(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ca, err := cache.New(env.Config, cache.Options{Scheme: testenv.Scheme()})
	require.NoError(t, err)
	require.NoError(t, ca.IndexField(ctx, &v1alpha1.GitRepository{}, WebhookPathIndex, IndexWebhookPath))
	go func() { _ = ca.Start(ctx) }()
	require.True(t, ca.WaitForCacheSync(ctx))
	cl, err := client.New(env.Config, client.Options{Scheme: testenv.Scheme(), Cache: &client.CacheOptions{Reader: ca}})
	require.NoError(t, err)

	var logs strings.Builder
	log := funcr.New(func(prefix, args string) { logs.WriteString(prefix + args + "\n") }, funcr.Options{Verbosity: 10})
	srv := httptest.NewServer(&Receiver{Client: cl, Log: log, Indexed: true})
	defer srv.Close()
	f.url = srv.URL

	body := `{"ref":"refs/heads/main"}`
	require.Eventually(t, func() bool {
		code, _ := f.do(t, hookRequest{"POST", f.path, headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body)), body})
		return code == 200
	}, 10*time.Second, 100*time.Millisecond)
	assert.NotEmpty(t, f.annotation(t))
	code, _ := f.do(t, hookRequest{"POST", f.path, headers(GitLabEventHeader, "Push Hook", GitLabTokenHeader, "wrong"), body})
	assert.Equal(t, 401, code)
	assert.Contains(t, logs.String(), "reconcile requested")
	assert.NotContains(t, logs.String(), hookToken)
}

// TestReceiverReplay: a signed delivery sent again, with its delivery id
// or with a fresh one (the id header is not signed), is answered 200 and
// requests no second reconcile; a new delivery still does.
func TestReceiverReplay(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	for _, tc := range []struct {
		name   string
		header func(body, id string) http.Header
	}{
		{"github", func(body, id string) http.Header {
			return headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body), "X-GitHub-Delivery", id)
		}},
		{"gitea", func(body, id string) http.Header {
			return headers(GiteaEventHeader, "push", GiteaSignatureHeader, sign(hookToken, body), "X-Gitea-Delivery", id, "X-GitHub-Delivery", id)
		}},
		{"gitlab", func(_, id string) http.Header {
			return headers(GitLabEventHeader, "Push Hook", GitLabTokenHeader, hookToken, "X-Gitlab-Event-UUID", id, "Idempotency-Key", id)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"ref":"refs/heads/main","after":"%s","forge":%q}`, sha, tc.name)
			deliver := func(body, id string) int {
				clearAnnotation(t, f)
				code, status := f.do(t, hookRequest{"POST", f.path, tc.header(body, id), body})
				require.Equal(t, 200, code, status)
				return code
			}
			deliver(body, tc.name+"-1")
			require.NotEmpty(t, f.annotation(t), "the first delivery requests a reconcile")

			deliver(body, tc.name+"-1")
			assert.Empty(t, f.annotation(t), "the same delivery again requests nothing")
			deliver(body, tc.name+"-2")
			assert.Empty(t, f.annotation(t), "the same signed body under a fresh delivery id requests nothing")

			other := strings.Replace(body, `"forge"`, `"next":1,"forge"`, 1)
			deliver(other, tc.name+"-3")
			assert.NotEmpty(t, f.annotation(t), "a new delivery requests a reconcile")
		})
	}
}

// TestReplayMemoBounds: the memo holds at most its size, forgets entries
// after its TTL, and forgets a delivery whose handling failed.
func TestReplayMemoBounds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	m := newReplayMemo(4, time.Hour)
	k := func(i int) []string { return []string{fmt.Sprintf("k%d", i)} }
	for i := range 10 {
		require.True(t, m.begin(k(i), now))
	}
	assert.Equal(t, 4, m.len(), "bounded")
	assert.False(t, m.begin(k(9), now), "recent entries are kept")
	assert.True(t, m.begin(k(0), now), "the oldest were evicted")

	assert.False(t, m.begin(k(0), now.Add(59*time.Minute)))
	assert.True(t, m.begin(k(0), now.Add(61*time.Minute)), "forgotten after the TTL")

	require.True(t, m.begin(k(20), now))
	m.forget(k(20))
	assert.True(t, m.begin(k(20), now), "a failed delivery is handled when it comes again")

	keys := deliveryKeys("/hook/x", headers("X-GitHub-Delivery", "abc"), []byte("{}"))
	assert.Len(t, keys, 2, "id and body digest")
	assert.Len(t, deliveryKeys("/hook/x", http.Header{}, []byte("{}")), 1, "body digest alone without an id")
}

// TestReceiverMissingSecret: a GitRepository whose webhook Secret (or its
// token key) is missing answers 404, exactly as a path that does not
// exist, and has no side effect.
func TestReceiverMissingSecret(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	body := `{"ref":"refs/heads/main"}`
	h := headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body))
	unknownCode, unknownBody := f.doBody(t, hookRequest{"POST", "/hook/" + strings.Repeat("0", 64), h, body})
	require.Equal(t, 404, unknownCode)

	ctx := context.Background()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.gr.Namespace, Name: "hook"}}
	require.NoError(t, f.c.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.gr.Namespace, Name: "hook"},
		Data: map[string][]byte{"other": []byte(hookToken)}}))
	code, got := f.doBody(t, hookRequest{"POST", f.path, h, body})
	assert.Equal(t, unknownCode, code, "no token key: %s", got)
	assert.Equal(t, unknownBody, got)
	assert.Empty(t, f.annotation(t))

	require.NoError(t, f.c.Delete(ctx, sec))
	code, got = f.doBody(t, hookRequest{"POST", f.path, h, body})
	assert.Equal(t, unknownCode, code, "no Secret: %s", got)
	assert.Equal(t, unknownBody, got)
	assert.Empty(t, f.annotation(t))
}

// doBody is do returning the response body.
func (f *hookFixture) doBody(t *testing.T, r hookRequest) (int, string) {
	t.Helper()
	req, err := http.NewRequest(r.method, f.url+r.path, strings.NewReader(r.body))
	require.NoError(t, err)
	for k, v := range r.h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// A push while a request is pending (a `bg-gitops reconcile --wait` the
// controller has not handled yet) leaves that request as it is: it
// fetches the pushed commit as well, and the command waiting for it is
// not left waiting for a request that was erased. Once it is handled, the
// next push asks again.
func TestReceiverKeepsAPendingRequest(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	ctx := context.Background()
	const pending = "2026-01-02T03:04:05.123456789Z"
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.ReconcileRequestedAtAnnotation + `":"` + pending + `"}}}`)
	require.NoError(t, f.c.Patch(ctx, f.gr.DeepCopy(), client.RawPatch("application/merge-patch+json", patch)))
	push := func(n int) {
		body := fmt.Sprintf(`{"ref":"refs/heads/main","after":"%s","n":%d}`, sha, n)
		code, status := f.do(t, hookRequest{"POST", f.path, headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body)), body})
		require.Equal(t, 200, code, status)
	}
	push(1)
	assert.Equal(t, pending, f.annotation(t), "the pending request is kept")

	var gr v1alpha1.GitRepository
	require.NoError(t, f.c.Get(ctx, client.ObjectKeyFromObject(f.gr), &gr))
	gr.Status.LastHandledReconcileAt = pending
	require.NoError(t, f.c.Status().Update(ctx, &gr))
	push(2)
	got := f.annotation(t)
	at, err := time.Parse(time.RFC3339Nano, got)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), at, time.Minute, "once handled, a push asks again")
}

// prForge sends a pull-request event the way one forge does.
type prForge struct {
	name   string
	body   func(action, base string, n int) string
	header func(body, token string) http.Header
}

var prForges = []prForge{
	{"github", func(action, base string, n int) string {
		return fmt.Sprintf(`{"action":%q,"number":7,"pull_request":{"number":7,"base":{"ref":%q},"head":{"sha":"%s"}},"n":%d}`, action, base, sha, n)
	}, func(body, token string) http.Header {
		return headers(GitHubEventHeader, "pull_request", GitHubSignatureHeader, "sha256="+sign(token, body))
	}},
	{"gitea", func(action, base string, n int) string {
		if action == "synchronize" {
			action = "synchronized"
		}
		return fmt.Sprintf(`{"action":%q,"number":7,"pull_request":{"number":7,"base":{"ref":%q}},"n":%d}`, action, base, n)
	}, func(body, token string) http.Header {
		return headers(GiteaEventHeader, "pull_request", "X-Gitea-Event-Type", "pull_request_sync", GitHubEventHeader, "pull_request",
			GiteaSignatureHeader, sign(token, body), GitHubSignatureHeader, "sha256="+sign(token, body))
	}},
	{"gitlab", func(action, base string, n int) string {
		if action == "synchronize" {
			action = "update"
		}
		return fmt.Sprintf(`{"object_kind":"merge_request","object_attributes":{"iid":7,"action":%q,"target_branch":%q},"n":%d}`, action, base, n)
	}, func(_, token string) http.Header {
		return headers(GitLabEventHeader, "Merge Request Hook", GitLabTokenHeader, token)
	}},
}

// enablePullRequests sets spec.pullRequests on the fixture's GitRepository.
func enablePullRequests(t *testing.T, f *hookFixture) {
	t.Helper()
	patch := []byte(`{"spec":{"pullRequests":{"max":20}}}`)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: f.gr.Namespace, Name: f.gr.Name}}
	require.NoError(t, f.c.Patch(context.Background(), gr, client.RawPatch("application/merge-patch+json", patch)))
}

func (f *hookFixture) annotations(t *testing.T) map[string]string {
	t.Helper()
	var gr v1alpha1.GitRepository
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKeyFromObject(f.gr), &gr))
	return gr.Annotations
}

// clearPlanAnnotation removes the plan annotation with a merge patch.
func clearPlanAnnotation(t *testing.T, f *hookFixture) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.PlanRequestedAtAnnotation + `":null}}}`)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: f.gr.Namespace, Name: f.gr.Name}}
	require.NoError(t, f.c.Patch(context.Background(), gr, client.RawPatch("application/merge-patch+json", patch)))
}

// A pull-request event on a GitRepository with spec.pullRequests requests
// a plan and leaves the sync alone; a forged one, one into another branch
// or one whose action changes no plan has no side effect.
func TestReceiverPullRequestEvents(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	enablePullRequests(t, f)
	n := 0
	for _, forge := range prForges {
		for _, tc := range []struct {
			name, action, base, token string
			code                      int
			plan                      bool
		}{
			{"head moved", "synchronize", "main", hookToken, 200, true},
			{"opened", "opened", "main", hookToken, 200, true},
			{"bad signature", "synchronize", "main", "guess", 401, false},
			{"into another branch", "synchronize", "dev", hookToken, 202, false},
			{"action changes no plan", "assigned", "main", hookToken, 202, false},
		} {
			t.Run(forge.name+" "+tc.name, func(t *testing.T) {
				clearPlanAnnotation(t, f)
				n++
				body := forge.body(tc.action, tc.base, n)
				code, status := f.do(t, hookRequest{"POST", f.path, forge.header(body, tc.token), body})
				assert.Equal(t, tc.code, code, status)
				ann := f.annotations(t)
				assert.Empty(t, ann[v1alpha1.ReconcileRequestedAtAnnotation], "the sync is not requested")
				if !tc.plan {
					assert.Empty(t, ann[v1alpha1.PlanRequestedAtAnnotation], "no side effect")
					return
				}
				at, err := time.Parse(time.RFC3339Nano, ann[v1alpha1.PlanRequestedAtAnnotation])
				require.NoError(t, err)
				assert.WithinDuration(t, time.Now(), at, time.Minute)
			})
		}
	}
}

// Without spec.pullRequests a pull-request event is answered as any other
// event that is not a push (400), with no side effect.
func TestReceiverPullRequestEventsNeedSpecPullRequests(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	for i, forge := range prForges {
		body := forge.body("synchronize", "main", i)
		code, status := f.do(t, hookRequest{"POST", f.path, forge.header(body, hookToken), body})
		assert.Equal(t, 400, code, "%s: %s", forge.name, status)
		ann := f.annotations(t)
		assert.Empty(t, ann[v1alpha1.PlanRequestedAtAnnotation], forge.name)
		assert.Empty(t, ann[v1alpha1.ReconcileRequestedAtAnnotation], forge.name)
	}
}

// A pull-request event while a plan request is pending (not yet in
// status.lastHandledPlanAt) leaves that request as it is: the pending one
// lists the heads, the new one's included. Once it is handled, the next
// event asks again.
func TestReceiverKeepsAPendingPlanRequest(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	enablePullRequests(t, f)
	ctx := context.Background()
	const pending = "2026-01-02T03:04:05.123456789Z"
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.PlanRequestedAtAnnotation + `":"` + pending + `"}}}`)
	require.NoError(t, f.c.Patch(ctx, f.gr.DeepCopy(), client.RawPatch("application/merge-patch+json", patch)))
	forge := prForges[0]
	event := func(n int) {
		body := forge.body("synchronize", "main", n)
		code, status := f.do(t, hookRequest{"POST", f.path, forge.header(body, hookToken), body})
		require.Equal(t, 200, code, status)
	}
	event(1)
	assert.Equal(t, pending, f.annotations(t)[v1alpha1.PlanRequestedAtAnnotation], "the pending request is kept")

	var gr v1alpha1.GitRepository
	require.NoError(t, f.c.Get(ctx, client.ObjectKeyFromObject(f.gr), &gr))
	gr.Status.LastHandledPlanAt = pending
	require.NoError(t, f.c.Status().Update(ctx, &gr))
	event(2)
	at, err := time.Parse(time.RFC3339Nano, f.annotations(t)[v1alpha1.PlanRequestedAtAnnotation])
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), at, time.Minute, "once handled, an event asks again")
}
