/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

const (
	testUser = "gitops"
	testPass = "s3cret-Pa55word"
)

// httpRepo is a repository served over smart HTTP with basic auth.
type httpRepo struct {
	*gittest.Repo
	srv *gittest.HTTPServer
	url string
}

func newHTTPRepo(t *testing.T) *httpRepo {
	t.Helper()
	gittest.Isolate(t)
	root := t.TempDir()
	r := gittest.NewRepo(t, root, "app")
	srv := gittest.ServeHTTP(t, root, gittest.HTTPOptions{Username: testUser, Password: testPass})
	return &httpRepo{Repo: r, srv: srv, url: srv.URL + "/app.git"}
}

func (h *httpRepo) opts(t *testing.T, ref v1alpha1.GitRepositoryRef) Options {
	t.Helper()
	a, err := AuthFromSecret(map[string][]byte{"username": []byte(testUser), "password": []byte(testPass)}, h.url)
	require.NoError(t, err)
	// The test server speaks plain http: credentials over it need the
	// --allow-insecure-http opt-in.
	return Options{URL: h.url, Ref: ref, Auth: a, Timeout: 20 * time.Second, Dir: filepath.Join(t.TempDir(), "cache"), AllowInsecureHTTP: true}
}

func fetchOK(t *testing.T, o *Options) Result {
	t.Helper()
	res, err := Fetch(context.Background(), *o)
	require.NoError(t, err)
	o.LastRevision = res.Revision
	return res
}

func readFile(t *testing.T, res Result, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(res.Dir, name))
	require.NoError(t, err)
	return string(b)
}

func TestFetchBranchNoopPollAndNewCommit(t *testing.T) {
	h := newHTTPRepo(t)
	c1 := h.Commit(map[string]string{"app.yaml": "v: 1\n"}, "one")
	h.Push("main")
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})

	res := fetchOK(t, &o)
	assert.Equal(t, "main@sha1:"+c1, res.Revision)
	assert.Equal(t, c1, res.Commit)
	assert.True(t, res.Fetched)
	assert.Equal(t, "v: 1\n", readFile(t, res, "app.yaml"))
	assert.EqualValues(t, 1, h.srv.UploadPacks())

	res = fetchOK(t, &o)
	assert.False(t, res.Fetched, "unchanged ref must not fetch")
	assert.Equal(t, "main@sha1:"+c1, res.Revision)
	assert.EqualValues(t, 1, h.srv.UploadPacks(), "no-op poll must not clone")
	assert.EqualValues(t, 2, h.srv.Listings(), "one listing per fetch: go-git's own is answered from the fetch's")

	c2 := h.Commit(map[string]string{"app.yaml": "v: 2\n", "extra.yaml": "x\n"}, "two")
	h.Push("main")
	res = fetchOK(t, &o)
	assert.True(t, res.Fetched)
	assert.Equal(t, "main@sha1:"+c2, res.Revision)
	assert.Equal(t, "v: 2\n", readFile(t, res, "app.yaml"))
	assert.EqualValues(t, 2, h.srv.UploadPacks())
}

func TestFetchBranchForcePushedBack(t *testing.T) {
	h := newHTTPRepo(t)
	c1 := h.Commit(map[string]string{"f": "1"}, "one")
	c2 := h.Commit(map[string]string{"f": "2", "only-in-2": "x"}, "two")
	h.Push("main")
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	assert.Equal(t, c2, fetchOK(t, &o).Commit)

	h.Git("reset", "--quiet", "--hard", c1)
	h.ForcePush("main")
	res := fetchOK(t, &o)
	assert.Equal(t, "main@sha1:"+c1, res.Revision)
	assert.Equal(t, "1", readFile(t, res, "f"))
	assert.NoFileExists(t, filepath.Join(res.Dir, "only-in-2"))

	c3 := h.Commit(map[string]string{"f": "3"}, "three")
	h.ForcePush("main")
	assert.Equal(t, c3, fetchOK(t, &o).Commit)
}

func TestFetchTagMoved(t *testing.T) {
	for _, annotated := range []bool{false, true} {
		t.Run(map[bool]string{false: "lightweight", true: "annotated"}[annotated], func(t *testing.T) {
			h := newHTTPRepo(t)
			tag := h.Tag
			if annotated {
				tag = h.AnnotatedTag
			}
			c1 := h.Commit(map[string]string{"f": "1"}, "one")
			tag("v1", c1)
			h.Push("main", "v1")
			o := h.opts(t, v1alpha1.GitRepositoryRef{Tag: "v1"})
			res := fetchOK(t, &o)
			assert.Equal(t, "v1@sha1:"+c1, res.Revision, "annotated tags resolve to their commit")
			assert.Equal(t, "1", readFile(t, res, "f"))

			c2 := h.Commit(map[string]string{"f": "2"}, "two")
			tag("v1", c2)
			h.ForcePush("main", "v1")
			res = fetchOK(t, &o)
			assert.Equal(t, "v1@sha1:"+c2, res.Revision)
			assert.Equal(t, "2", readFile(t, res, "f"))
			assert.False(t, fetchOK(t, &o).Fetched)
		})
	}
}

func TestFetchSemver(t *testing.T) {
	h := newHTTPRepo(t)
	commits := map[string]string{}
	for _, v := range []string{"v1.0.0", "v1.2.0", "1.1.0", "v2.0.0", "latest", "v1.5.0-rc.1"} {
		commits[v] = h.Commit(map[string]string{"version": v}, v)
		h.AnnotatedTag(v, "HEAD")
	}
	h.Git("push", "--quiet", "--tags", "origin", "main")
	o := h.opts(t, v1alpha1.GitRepositoryRef{SemVer: ">=1.0.0 <2.0.0"})
	res := fetchOK(t, &o)
	assert.Equal(t, "v1.2.0@sha1:"+commits["v1.2.0"], res.Revision)
	assert.Equal(t, "v1.2.0", readFile(t, res, "version"))

	c := h.Commit(map[string]string{"version": "v1.3.0"}, "v1.3.0")
	h.Tag("v1.3.0", c)
	h.Push("v1.3.0")
	assert.Equal(t, "v1.3.0@sha1:"+c, fetchOK(t, &o).Revision)

	o.Ref = v1alpha1.GitRepositoryRef{SemVer: ">= 3.0"}
	_, err := Fetch(context.Background(), o)
	assertFetchErr(t, err, ReasonRefNotFound, `no tag matches the semver range ">= 3.0"`)
	assert.ErrorIs(t, err, ErrRefNotFound)

	o.Ref = v1alpha1.GitRepositoryRef{SemVer: ">=1.0.0 <<2"}
	_, err = Fetch(context.Background(), o)
	assertFetchErr(t, err, ReasonInvalidRef, `semver range ">=1.0.0 <<2" is malformed`)
	assert.True(t, err.(*Error).Terminal())
}

func TestFetchCommit(t *testing.T) {
	h := newHTTPRepo(t)
	c1 := h.Commit(map[string]string{"f": "1"}, "one")
	c2 := h.Commit(map[string]string{"f": "2"}, "two")
	h.Commit(map[string]string{"f": "3"}, "three")
	h.Tag("t2", c2)
	h.Push("main", "t2")

	for _, tc := range []struct {
		name, sha, want string
		serverConfig    bool
	}{
		{"tip of a tag", c2, "2", false},
		{"buried, fetched by hash", c1, "1", true},
		{"buried, server refuses wants by hash", c1, "1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.serverConfig {
				gittest.Git(t, h.Bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
				defer gittest.Git(t, h.Bare, "config", "--unset", "uploadpack.allowReachableSHA1InWant")
			}
			o := h.opts(t, v1alpha1.GitRepositoryRef{Commit: tc.sha})
			res := fetchOK(t, &o)
			assert.Equal(t, "sha1:"+tc.sha, res.Revision)
			assert.Equal(t, tc.want, readFile(t, res, "f"))
			assert.False(t, fetchOK(t, &o).Fetched)
		})
	}

	o := h.opts(t, v1alpha1.GitRepositoryRef{Commit: strings.Repeat("ab", 20)})
	_, err := Fetch(context.Background(), o)
	assertFetchErr(t, err, ReasonRefNotFound, "commit abab")
}

func TestFetchNameRef(t *testing.T) {
	h := newHTTPRepo(t)
	h.Commit(map[string]string{"f": "main"}, "main")
	h.Push("main")
	pr := h.Commit(map[string]string{"f": "pr"}, "pr")
	h.Push(pr + ":refs/pull/7/head")
	o := h.opts(t, v1alpha1.GitRepositoryRef{Name: "refs/pull/7/head"})
	res := fetchOK(t, &o)
	assert.Equal(t, "refs/pull/7/head@sha1:"+pr, res.Revision)
	assert.Equal(t, "pr", readFile(t, res, "f"))
}

func TestFetchErrors(t *testing.T) {
	h := newHTTPRepo(t)
	h.Commit(map[string]string{"f": "1"}, "one")
	h.Push("main")
	closed := closedPort(t)

	for _, tc := range []struct {
		name   string
		mutate func(o *Options)
		reason string
		msg    string
	}{
		{"missing branch", func(o *Options) { o.Ref = v1alpha1.GitRepositoryRef{Branch: "nope"} }, ReasonRefNotFound, `branch "nope": ref not found`},
		{"missing tag", func(o *Options) { o.Ref = v1alpha1.GitRepositoryRef{Tag: "v9"} }, ReasonRefNotFound, `tag "v9": ref not found`},
		{"wrong password", func(o *Options) { o.Auth = basic(t, o.URL, testUser, "wrong-"+testPass) }, ReasonAuthenticationFailed, "check the username/password"},
		{"no credentials", func(o *Options) { o.Auth = nil }, ReasonAuthenticationFailed, "set spec.secretRef"},
		{"password in url", func(o *Options) {
			o.URL = strings.Replace(o.URL, "http://", "http://"+testUser+":wrong-"+testPass+"@", 1)
			o.Auth = nil
		}, ReasonAuthenticationFailed, "authentication"},
		{"unreachable host", func(o *Options) { o.URL = "http://" + closed + "/app.git" }, ReasonUnreachable, "cannot connect to http://" + closed},
		{"repository not found", func(o *Options) { o.URL = h.srv.URL + "/nope.git" }, ReasonRepositoryNotFound, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
			tc.mutate(&o)
			_, err := Fetch(context.Background(), o)
			assertFetchErr(t, err, tc.reason, tc.msg)
		})
	}
}

func TestFetchTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() { // accept and say nothing
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	_, err = Fetch(context.Background(), Options{
		URL: "http://" + ln.Addr().String() + "/x.git", Timeout: 300 * time.Millisecond,
		Dir: t.TempDir(), Ref: v1alpha1.GitRepositoryRef{Branch: "main"},
	})
	assertFetchErr(t, err, ReasonTimeout, "did not answer within spec.timeout (300ms)")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestFetchBearerTokenOverTLS(t *testing.T) {
	gittest.Isolate(t)
	root := t.TempDir()
	r := gittest.NewRepo(t, root, "app")
	c := r.Commit(map[string]string{"f": "1"}, "one")
	r.Push("main")
	srv := gittest.ServeHTTP(t, root, gittest.HTTPOptions{TLS: true, Token: "tok-123456"})
	url := srv.URL + "/app.git"
	secret := map[string][]byte{"bearerToken": []byte("tok-123456")}

	a, err := AuthFromSecret(secret, url)
	require.NoError(t, err)
	o := Options{URL: url, Auth: a, Dir: t.TempDir(), Ref: v1alpha1.GitRepositoryRef{Branch: "main"}}
	_, err = Fetch(context.Background(), o)
	assertFetchErr(t, err, ReasonTLS, "put the CA bundle under caFile")

	secret["caFile"] = srv.CABundle
	a, err = AuthFromSecret(secret, url)
	require.NoError(t, err)
	o.Auth = a
	res := fetchOK(t, &o)
	assert.Equal(t, c, res.Commit)
}

func TestFetchFile(t *testing.T) {
	gittest.Isolate(t)
	r := gittest.NewRepo(t, t.TempDir(), "app")
	c := r.Commit(map[string]string{"f": "1"}, "one")
	r.AnnotatedTag("v1.0.0", c)
	r.Push("main", "v1.0.0")
	o := Options{URL: "file://" + r.Bare, Dir: t.TempDir(), Ref: v1alpha1.GitRepositoryRef{SemVer: "^1"}, AllowFileURLs: true}
	res := fetchOK(t, &o)
	assert.Equal(t, "v1.0.0@sha1:"+c, res.Revision)
	assert.False(t, fetchOK(t, &o).Fetched)
}

func basic(t *testing.T, url, user, pass string) *Auth {
	t.Helper()
	a, err := AuthFromSecret(map[string][]byte{"username": []byte(user), "password": []byte(pass)}, url)
	require.NoError(t, err)
	return a
}

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// assertFetchErr checks the reason and message, and that no secret leaks.
func assertFetchErr(t *testing.T, err error, reason, msg string) {
	t.Helper()
	require.Error(t, err)
	var fe *Error
	require.True(t, errors.As(err, &fe), "want *source.Error, got %T: %v", err, err)
	t.Logf("%s: %s", fe.Reason, fe.Message)
	assert.Equal(t, reason, fe.Reason, "message: %s", fe.Message)
	assert.Contains(t, fe.Message, msg)
	for _, s := range []string{testPass, "tok-123456", "PRIVATE KEY"} {
		assert.NotContains(t, fe.Message, s, "secret leaked")
	}
}

func TestFetchRecoversFromBrokenCache(t *testing.T) {
	h := newHTTPRepo(t)
	c := h.Commit(map[string]string{"f": "1"}, "one")
	h.Push("main")
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	require.NoError(t, os.MkdirAll(o.Dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(o.Dir, ".git"), []byte("garbage"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(o.Dir, "stale.yaml"), []byte("x"), 0o644))
	res := fetchOK(t, &o)
	assert.Equal(t, c, res.Commit)
	assert.NoFileExists(t, filepath.Join(res.Dir, "stale.yaml"))
}

// TestInterruptedCheckoutIsCompletedByTheNextFetch: a fetch whose process
// was killed while it wrote the files (go-git moves HEAD first) leaves a
// worktree of two commits; the next fetch of that commit writes it whole
// instead of taking it for done.
func TestInterruptedCheckoutIsCompletedByTheNextFetch(t *testing.T) {
	h := newHTTPRepo(t)
	h.Commit(map[string]string{"app.yaml": "v: 1\n"}, "one")
	h.Push("main")
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	fetchOK(t, &o)
	h.Commit(map[string]string{"app.yaml": "v: 2\n", "extra.yaml": "x\n"}, "two")
	h.Push("main")
	res := fetchOK(t, &o)

	// What a kill halfway through the checkout leaves: HEAD on the new
	// commit, the files partly the old ones, the checkout not marked done.
	require.NoError(t, os.WriteFile(filepath.Join(res.Dir, "app.yaml"), []byte("v: 1\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(res.Dir, "extra.yaml")))
	repo, err := git.PlainOpen(res.Dir)
	require.NoError(t, err)
	require.NoError(t, repo.Storer.RemoveReference(checkedOut))

	res = fetchOK(t, &o)
	assert.False(t, res.Fetched, "the commit is in the cache already")
	assert.Equal(t, "v: 2\n", readFile(t, res, "app.yaml"))
	assert.Equal(t, "x\n", readFile(t, res, "extra.yaml"))

	// Killed while it wrote the index: the index is cut short.
	require.NoError(t, os.WriteFile(filepath.Join(res.Dir, ".git", "index"), []byte("DIRC\x00"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(res.Dir, "extra.yaml")))
	require.NoError(t, repo.Storer.RemoveReference(checkedOut))
	res = fetchOK(t, &o)
	assert.Equal(t, "x\n", readFile(t, res, "extra.yaml"), "a cut index does not stop the next checkout")
}

// TestPollTellsAnUnchangedCheckout: a poll lists the refs and reports the
// checkout unchanged only while the ref resolves to the commit checked out
// whole as the last revision.
func TestPollTellsAnUnchangedCheckout(t *testing.T) {
	h := newHTTPRepo(t)
	c1 := h.Commit(map[string]string{"app.yaml": "v: 1\n"}, "one")
	h.Push("main")
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	_, unchanged, err := Poll(context.Background(), o)
	require.NoError(t, err)
	assert.False(t, unchanged, "nothing fetched yet")
	res := fetchOK(t, &o)

	polled, unchanged, err := Poll(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, unchanged)
	assert.Equal(t, "main@sha1:"+c1, polled.Revision)
	assert.Equal(t, res.Dir, polled.Dir)
	assert.EqualValues(t, 1, h.srv.UploadPacks(), "a poll downloads nothing")

	repo, err := git.PlainOpen(res.Dir)
	require.NoError(t, err)
	require.NoError(t, repo.Storer.RemoveReference(checkedOut))
	_, unchanged, err = Poll(context.Background(), o)
	require.NoError(t, err)
	assert.False(t, unchanged, "a checkout not finished is not unchanged")

	fetchOK(t, &o)
	c2 := h.Commit(map[string]string{"app.yaml": "v: 2\n"}, "two")
	h.Push("main")
	polled, unchanged, err = Poll(context.Background(), o)
	require.NoError(t, err)
	assert.False(t, unchanged, "the ref moved")
	assert.Equal(t, "main@sha1:"+c2, polled.Revision)

	// A fetch of what the poll resolved does not list the refs again:
	// the download's advertisement is the poll's (carried in the Target,
	// as to a worker), one listing per change in all.
	listings := h.srv.Listings()
	require.NotNil(t, polled.Target.Listing)
	o.Target = polled.Target
	res = fetchOK(t, &o)
	assert.Equal(t, "main@sha1:"+c2, res.Revision)
	assert.Equal(t, "v: 2\n", readFile(t, res, "app.yaml"))
	assert.EqualValues(t, listings, h.srv.Listings())
}

// A poll told which commit its directory holds (Cache.CheckedOut) trusts
// it and reads nothing on disk: an idle poll costs one listing and no
// opening of the repository.
func TestPollOfARememberedCheckoutReadsNothingOnDisk(t *testing.T) {
	h := newHTTPRepo(t)
	c1 := h.Commit(map[string]string{"app.yaml": "v: 1\n"}, "one")
	h.Push("main")
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	res := fetchOK(t, &o)
	require.NoError(t, os.RemoveAll(filepath.Join(res.Dir, ".git")), "a repository Poll could not open")

	o.CheckedOut = c1
	_, unchanged, err := Poll(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, unchanged, "the remembered commit is trusted without opening the directory")

	o.CheckedOut = ""
	_, unchanged, err = Poll(context.Background(), o)
	require.NoError(t, err)
	assert.False(t, unchanged, "without a remembered commit the directory is read, and holds nothing")

	o.CheckedOut = strings.Repeat("0", 40)
	_, unchanged, err = Poll(context.Background(), o)
	require.NoError(t, err)
	assert.False(t, unchanged, "another remembered commit is a change")
}
