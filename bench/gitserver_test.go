//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// gitServer serves the bare repositories under root over smart HTTP on
// 127.0.0.1 and logs when each repository was asked for its refs: the git
// side of "webhook → reconcile start" and of "git requests per idle
// minute" needs per-repository timestamps, which gittest's global counters
// do not give. Behind it is either `git http-backend`, the CGI that
// gittest.ServeHTTP runs, or a real Gitea's own smart HTTP (BENCH_GIT=gitea),
// to which every commit is pushed: then URL/<repo>.git is Gitea's
// <admin>/<repo>.git, so that both servers are addressed alike.
type gitServer struct {
	URL  string
	root string
	// forge, when set, is the Gitea the requests go to.
	forge *gitea.Server
	// onForge holds the repositories created on the forge.
	onForge sync.Map

	mu       sync.Mutex
	listings map[string][]time.Time // repo → ref advertisements served
	packs    int64
	lists    int64
	// listTime and packTime are the summed durations of those requests.
	listTime, packTime time.Duration
}

// serveGit serves root with `git http-backend`.
func serveGit(t *testing.T, root string) *gitServer {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, k := range []string{"PATH", "HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	s := &gitServer{root: root, listings: map[string][]time.Time{}}
	s.serve(t, &cgi.Handler{Path: gitPath, Args: []string{"http-backend"},
		Env: append(env, "GIT_PROJECT_ROOT="+root, "GIT_HTTP_EXPORT_ALL=1"), Stderr: io.Discard})
	return s
}

// serveGitea serves root's repositories from forge, a running Gitea:
// requests for /<repo>.git/… go to its /<admin>/<repo>.git/….
func serveGitea(t *testing.T, root string, forge *gitea.Server) *gitServer {
	t.Helper()
	target, err := url.Parse(forge.URL + "/" + forge.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	s := &gitServer{root: root, forge: forge, listings: map[string][]time.Time{}}
	s.serve(t, &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1})
	return s
}

// serve starts the counting front of backend.
func (s *gitServer) serve(t *testing.T, backend http.Handler) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		repo := strings.TrimPrefix(r.URL.Path, "/")
		repo = repo[:max(strings.Index(repo, ".git"), 0)]
		s.mu.Lock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/info/refs"):
			s.lists++
			s.listings[repo] = append(s.listings[repo], now)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			s.packs++
		}
		s.mu.Unlock()
		backend.ServeHTTP(w, r)
		d := time.Since(now)
		s.mu.Lock()
		if strings.HasSuffix(r.URL.Path, "/info/refs") {
			s.listTime += d
		} else {
			s.packTime += d
		}
		s.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
}

// name says who answers the git requests.
func (s *gitServer) name() string {
	if s.forge != nil {
		return "Gitea's smart HTTP"
	}
	return "git http-backend"
}

// commit writes files as a new commit on main of repository name (see
// commitBare) and, with a forge, pushes it there before it returns.
func (s *gitServer) commit(t *testing.T, name string, files map[string]string, msg string) string {
	t.Helper()
	sha := commitBare(t, s.root, name, files, msg)
	if s.forge == nil {
		return sha
	}
	if _, made := s.onForge.Load(name); !made {
		if _, err := s.forge.CreateRepo(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		s.onForge.Store(name, true)
	}
	cmd := exec.Command("git", "push", "--quiet", "--force", s.forge.AuthCloneURL(name), "refs/heads/main:refs/heads/main")
	cmd.Dir = filepath.Join(s.root, name+".git")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git push to Gitea: %v: %s", err, strings.ReplaceAll(string(out), s.forge.AdminPassword, "***"))
	}
	return sha
}

// counts returns ref advertisements and upload-packs served so far.
func (s *gitServer) counts() (lists, packs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, s.packs
}

type gitBusy struct {
	lists, packs       int64
	listTime, packTime time.Duration
}

func (s *gitServer) busy() gitBusy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return gitBusy{s.lists, s.packs, s.listTime, s.packTime}
}

// busySince describes the git requests served since b and how long they took.
func (s *gitServer) busySince(b gitBusy) string {
	n := s.busy()
	per := func(d time.Duration, k int64) float64 {
		if k == 0 {
			return 0
		}
		return float64(d.Microseconds()) / 1000 / float64(k)
	}
	return fmt.Sprintf("%d ref listings × %.1f ms, %d upload-packs × %.1f ms (%s, wall time per request)",
		n.lists-b.lists, per(n.listTime-b.listTime, n.lists-b.lists), n.packs-b.packs, per(n.packTime-b.packTime, n.packs-b.packs), s.name())
}

// firstListingAfter is the first time repo's refs were listed at or after t.
func (s *gitServer) firstListingAfter(repo string, t time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, at := range s.listings[repo] {
		if !at.Before(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// workloadFiles is ./deploy of repository i: a kustomization with three
// ConfigMaps whose names are unique per repository (all repositories of a
// round apply into one namespace).
func workloadFiles(i int, value string) map[string]string {
	files := map[string]string{"deploy/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml, b.yaml, c.yaml]\n"}
	for _, n := range []string{"a", "b", "c"} {
		files["deploy/"+n+".yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: repo%03d-%s}\ndata: {key: %q, other: \"some configuration\"}\n", i, n, value)
	}
	return files
}

func repoName(i int) string { return fmt.Sprintf("repo%03d", i) }

// commitBare writes files as a new commit on main of the bare repository
// with git fast-import (one process, no working tree), creating the
// repository when needed. It returns the commit SHA.
func commitBare(t *testing.T, root, name string, files map[string]string, msg string) string {
	t.Helper()
	bare := filepath.Join(root, name+".git")
	first := false
	if _, err := os.Stat(bare); err != nil {
		gittest.Git(t, root, "init", "--quiet", "--bare", "--initial-branch=main", bare)
		first = true
	}
	var s bytes.Buffer
	fmt.Fprintf(&s, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\n", time.Now().Unix(), len(msg), msg)
	if !first {
		s.WriteString("from refs/heads/main^0\n")
	}
	for p, c := range files {
		fmt.Fprintf(&s, "M 644 inline %s\ndata %d\n%s\n", p, len(c), c)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = bare
	cmd.Stdin = &s
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v: %s", err, out)
	}
	return gittest.Git(t, bare, "rev-parse", "refs/heads/main")
}

// startForge starts the Gitea that BENCH_GIT=gitea serves the repositories
// from; it stops with the test.
func startForge(t *testing.T) *gitea.Server {
	t.Helper()
	forge, err := gitea.Start(context.Background(), gitea.Options{})
	if err != nil {
		t.Fatalf("BENCH_GIT=gitea: %v", err)
	}
	t.Cleanup(func() { _ = forge.Stop() })
	return forge
}
