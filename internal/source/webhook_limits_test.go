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
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// bodyWatch wraps a handler and records what it does with request bodies:
// how many bytes it read, and when it began to read each.
type bodyWatch struct {
	next    http.Handler
	read    atomic.Int64
	reading chan struct{} // one value per request whose body is being read
}

func newBodyWatch(next http.Handler) *bodyWatch {
	return &bodyWatch{next: next, reading: make(chan struct{}, 1024)}
}

func (b *bodyWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = &watchedBody{ReadCloser: r.Body, w: b}
	b.next.ServeHTTP(w, r)
}

type watchedBody struct {
	io.ReadCloser
	w       *bodyWatch
	started bool
}

// Read counts what the receiver read, then, the first time, says that it
// reads: a test that waits for that sees the first bytes counted.
func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.w.read.Add(int64(n))
	if !b.started && (n > 0 || err != nil) {
		b.started = true
		b.w.reading <- struct{}{}
	}
	return n, err
}

// serveReceiver serves rc, watched, on a real HTTP server and points f at it.
func serveReceiver(t *testing.T, f *hookFixture, rc *Receiver) *bodyWatch {
	t.Helper()
	watch := newBodyWatch(rc)
	srv := httptest.NewServer(watch)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return watch
}

// slowDelivery is a signed push to another ref whose body the sender has
// not finished sending.
type slowDelivery struct {
	rest *io.PipeWriter
	body string
	done chan int // the answer's status code
}

// startSlowDelivery sends the headers and the first byte of a delivery
// and waits until the receiver reads its body. length is the declared
// Content-Length; -1 sends none (chunked).
func startSlowDelivery(t *testing.T, f *hookFixture, watch *bodyWatch, n int, length int64) *slowDelivery {
	t.Helper()
	body := fmt.Sprintf(`{"ref":"refs/heads/other","n":%d}`, n)
	if length > 0 {
		body += strings.Repeat(" ", int(length)-len(body))
	}
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, f.url+f.path, pr)
	require.NoError(t, err)
	req.ContentLength = length
	req.Header = headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body))
	d := &slowDelivery{rest: pw, body: body, done: make(chan int, 1)}
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			d.done <- 0
			return
		}
		_ = resp.Body.Close()
		d.done <- resp.StatusCode
	}()
	_, err = io.WriteString(pw, body[:1])
	require.NoError(t, err)
	<-watch.reading
	return d
}

// finish sends the rest of the body and returns the answer's status code.
func (d *slowDelivery) finish(t *testing.T) int {
	t.Helper()
	_, err := io.WriteString(d.rest, d.body[1:])
	require.NoError(t, err)
	require.NoError(t, d.rest.Close())
	return <-d.done
}

// TestReceiverAnswers503BeyondItsConcurrentRequests: while as many slow
// deliveries as --receiver-max-concurrent are being read, the next
// request is answered 503 with Retry-After, without being read; once they
// end, requests are handled again.
func TestReceiverAnswers503BeyondItsConcurrentRequests(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	const slots = 3
	watch := serveReceiver(t, f, &Receiver{Client: f.c, MaxBodyBytes: 4096, Log: testr.New(t),
		Limits: ReceiverLimits{MaxConcurrent: slots, MaxBufferedBytes: -1, PathRate: -1}})
	var slow []*slowDelivery
	for i := range slots {
		slow = append(slow, startSlowDelivery(t, f, watch, i, -1))
	}
	readBefore := watch.read.Load()

	body := `{"ref":"refs/heads/main"}`
	resp := post(t, f.url+f.path, headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body)), body)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	assert.Equal(t, readBefore, watch.read.Load(), "the refused request's body is not read")
	assert.Empty(t, f.annotation(t))

	for _, d := range slow {
		assert.Equal(t, http.StatusAccepted, d.finish(t), "a push to another ref")
	}
	resp = post(t, f.url+f.path, headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body)), body)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the slots are free again")
}

// TestReceiverHoldsAtMostItsByteBudgetOfBodies: slow deliveries hold the
// bytes they declare (the body limit when they declare none); a request
// whose body does not fit in what is left of --receiver-max-buffered-bytes
// is answered 503 before it is read, however many requests may run.
func TestReceiverHoldsAtMostItsByteBudgetOfBodies(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	watch := serveReceiver(t, f, &Receiver{Client: f.c, MaxBodyBytes: 4096, Log: testr.New(t),
		Limits: ReceiverLimits{MaxConcurrent: -1, MaxBufferedBytes: 3 * 4096, PathRate: -1}})
	declared := startSlowDelivery(t, f, watch, 1, 4096)
	chunked := startSlowDelivery(t, f, watch, 2, -1)
	small := startSlowDelivery(t, f, watch, 3, 2048)

	for _, length := range []int64{4096, -1} {
		pr, pw := io.Pipe()
		t.Cleanup(func() { _ = pw.Close() })
		req, err := http.NewRequest(http.MethodPost, f.url+f.path, pr)
		require.NoError(t, err)
		req.ContentLength = length
		req.Header = headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256=00")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "Content-Length %d", length)
		assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	}
	body := `{"ref":"refs/heads/other","fits":1}`
	resp := post(t, f.url+f.path, headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body)), body)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode, "a small body fits in what is left")

	for _, d := range []*slowDelivery{declared, chunked, small} {
		assert.Equal(t, http.StatusAccepted, d.finish(t))
	}
}

// TestReceiverRefusesBadTokensBeforeReadingTheBody: a wrong GitLab token,
// or no signature header at all, is answered 401 without reading a byte
// of the body; a right one is read.
func TestReceiverRefusesBadTokensBeforeReadingTheBody(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	watch := serveReceiver(t, f, &Receiver{Client: f.c, MaxBodyBytes: 4096, Log: testr.New(t), Limits: ReceiverLimits{PathRate: -1}})
	body := `{"ref":"refs/heads/main","pad":"` + strings.Repeat("x", 3000) + `"}`
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"wrong gitlab token", headers(GitLabEventHeader, "Push Hook", GitLabTokenHeader, "guess")},
		{"wrong gitlab token beside a github signature", headers(GitLabEventHeader, "Push Hook", GitLabTokenHeader, "guess",
			GitHubSignatureHeader, "sha256="+sign(hookToken, body))},
		{"no signature header", headers(GitHubEventHeader, "push")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := watch.read.Load()
			resp := post(t, f.url+f.path, tc.h, body)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Equal(t, before, watch.read.Load(), "no byte of the body read")
		})
	}
	resp := post(t, f.url+f.path, headers(GitLabEventHeader, "Push Hook", GitLabTokenHeader, hookToken), body)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotEmpty(t, f.annotation(t))
}

// TestReceiverStopsReadingAnOversizedBody: a body without Content-Length
// that passes the limit is answered 413 once the limit is passed; the
// rest is never read.
func TestReceiverStopsReadingAnOversizedBody(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	watch := serveReceiver(t, f, &Receiver{Client: f.c, MaxBodyBytes: 4096, Log: testr.New(t), Limits: ReceiverLimits{PathRate: -1}})
	huge := `{"ref":"refs/heads/main","pad":"` + strings.Repeat("x", 1<<20) + `"}`
	req, err := http.NewRequest(http.MethodPost, f.url+f.path, io.NopCloser(strings.NewReader(huge))) // no Content-Length
	require.NoError(t, err)
	req.Header = headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, huge))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.LessOrEqual(t, watch.read.Load(), int64(4096+1), "read up to the limit, not the whole body")
	assert.Empty(t, f.annotation(t))
}

// TestReceiverRateLimitsEachPath: past its burst, a path is answered 429
// with Retry-After, whatever the requests carry; another GitRepository's
// path is still answered.
func TestReceiverRateLimitsEachPath(t *testing.T) {
	flooded := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	other := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	const burst = 3
	rc := &Receiver{Client: flooded.c, MaxBodyBytes: 4096, Log: testr.New(t),
		Limits: ReceiverLimits{PathRate: 1.0 / 3600, PathBurst: burst}}
	serveReceiver(t, flooded, rc)
	other.url = flooded.url

	body := `{"ref":"refs/heads/main"}`
	forged := headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign("guess", body))
	for range burst {
		assert.Equal(t, http.StatusUnauthorized, post(t, flooded.url+flooded.path, forged, body).StatusCode)
	}
	signed := headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body))
	resp := post(t, flooded.url+flooded.path, signed, body)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "past the burst, even a signed delivery")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	assert.Empty(t, flooded.annotation(t))

	assert.Equal(t, http.StatusOK, post(t, other.url+other.path, signed, body).StatusCode, "another path is answered")
	assert.NotEmpty(t, other.annotation(t))
}

// post sends body with h and returns the answer, its body read and closed.
func post(t *testing.T, url string, h http.Header, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

// TestReceiverGateGivesBackWhatItTook: concurrent slots and body bytes
// come back once released, whatever the order.
func TestReceiverGateGivesBackWhatItTook(t *testing.T) {
	g := newReceiverGate(ReceiverLimits{MaxConcurrent: 2, MaxBufferedBytes: 10})
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if release, err := g.enter(); err == nil {
				if free, err := g.reserve(5); err == nil {
					free()
				}
				release()
			}
		}()
	}
	wg.Wait()
	r1, err := g.enter()
	require.NoError(t, err)
	r2, err := g.enter()
	require.NoError(t, err)
	_, err = g.enter()
	require.Error(t, err, "two slots")
	r1()
	r2()
	f1, err := g.reserve(10)
	require.NoError(t, err, "every byte given back")
	_, err = g.reserve(1)
	require.Error(t, err)
	f1()
}

// TestReceiverReadsARotatedSecretAfresh: a remembered token that does not
// give the GitRepository's published webhook path was rotated since; the
// receiver reads the Secret again and verifies with the new token.
func TestReceiverReadsARotatedSecretAfresh(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	var mu sync.Mutex // the handler runs on the server's goroutines
	var memo *corev1.Secret
	fresh := 0
	reads := func() int { mu.Lock(); defer mu.Unlock(); return fresh }
	remembering := func(ctx context.Context, key client.ObjectKey, refresh bool) (*corev1.Secret, error) {
		mu.Lock()
		defer mu.Unlock()
		if memo != nil && !refresh {
			return memo.DeepCopy(), nil
		}
		fresh++
		sec := &corev1.Secret{}
		if err := f.c.Get(ctx, key, sec); err != nil {
			return nil, err
		}
		memo = sec
		return sec.DeepCopy(), nil
	}
	serveReceiver(t, f, &Receiver{Client: f.c, MaxBodyBytes: 4096, Log: testr.New(t), Secrets: remembering, Limits: ReceiverLimits{PathRate: -1}})
	deliver := func(token string, n int) int {
		body := fmt.Sprintf(`{"ref":"refs/heads/main","n":%d}`, n)
		return post(t, f.url+f.path, headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(token, body)), body).StatusCode
	}
	require.Equal(t, http.StatusOK, deliver(hookToken, 1))
	require.Equal(t, http.StatusOK, deliver(hookToken, 2))
	require.Equal(t, 1, reads(), "the second delivery used the remembered token")

	ctx := context.Background()
	const rotated = "rotated-hook-token"
	require.NoError(t, f.c.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.gr.Namespace, Name: "hook"},
		Data: map[string][]byte{WebhookTokenKey: []byte(rotated)}}))
	var gr v1alpha1.GitRepository
	require.NoError(t, f.c.Get(ctx, client.ObjectKeyFromObject(f.gr), &gr))
	gr.Status.WebhookPath = WebhookPath([]byte(rotated), gr.Namespace, gr.Name) // as the reconciler publishes it
	require.NoError(t, f.c.Status().Update(ctx, &gr))
	f.path = gr.Status.WebhookPath

	assert.Equal(t, http.StatusOK, deliver(rotated, 3), "verified with the new token")
	assert.Equal(t, 2, reads())
}

// TestReceiverBodiesNeverLargerThanItsWholeByteBudget: with
// --receiver-max-buffered-bytes below the body limit, a body is bounded
// by the budget: a chunked delivery (no Content-Length) that fits is
// read, and one declared or sent larger than the whole budget is answered
// 413, not 503 with a Retry-After it could never meet.
func TestReceiverBodiesNeverLargerThanItsWholeByteBudget(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	serveReceiver(t, f, &Receiver{Client: f.c, MaxBodyBytes: 4096, Log: testr.New(t),
		Limits: ReceiverLimits{MaxConcurrent: -1, MaxBufferedBytes: 1024, PathRate: -1}})
	send := func(body string, length int64) *http.Response {
		req, err := http.NewRequest(http.MethodPost, f.url+f.path, io.NopCloser(strings.NewReader(body)))
		require.NoError(t, err)
		req.ContentLength = length
		req.Header = headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	small := `{"ref":"refs/heads/other"}`
	assert.Equal(t, http.StatusAccepted, send(small, -1).StatusCode, "a chunked body that fits the budget")
	large := `{"ref":"refs/heads/other","pad":"` + strings.Repeat("x", 2048) + `"}`
	assert.Equal(t, http.StatusRequestEntityTooLarge, send(large, int64(len(large))).StatusCode, "declared larger than the budget")
	assert.Equal(t, http.StatusRequestEntityTooLarge, send(large, -1).StatusCode, "sent larger than the budget")
}

// TestPullRequestEventsCannotThrottlePushes: pull-request events have a
// rate-limit bucket of their own: once a busy pull request has spent its
// burst (429), a push to the watched branch is still answered.
func TestPullRequestEventsCannotThrottlePushes(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	enablePullRequests(t, f)
	const burst = 2
	rc := &Receiver{Client: f.c, MaxBodyBytes: 4096, Log: testr.New(t),
		Limits: ReceiverLimits{PathRate: 1.0 / 3600, PathBurst: burst}}
	serveReceiver(t, f, rc)
	forge := prForges[0]
	for i := range burst + 1 {
		body := forge.body("synchronize", "main", i)
		resp := post(t, f.url+f.path, forge.header(body, hookToken), body)
		if i == burst {
			assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "past the pull requests' burst")
		}
	}
	body := `{"ref":"refs/heads/main"}`
	signed := headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body))
	assert.Equal(t, http.StatusOK, post(t, f.url+f.path, signed, body).StatusCode, "the push is answered")
	assert.NotEmpty(t, f.annotation(t), "the push requested a reconcile")
}
