/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package gitea

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// shared is one Gitea for the package's tests; nil when skipped.
var (
	shared     *Server
	skipReason string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{})
	switch {
	case Skippable(err):
		skipReason = err.Error()
	case err != nil:
		fmt.Fprintln(os.Stderr, "start gitea:", err)
		return 1
	default:
		shared = s
		defer s.Stop()
	}
	return m.Run()
}

var repos atomic.Int32

// repoName makes a repository name unique per run, so that the tests pass
// with -count=2 against the one Gitea of the package.
func repoName(base string) string { return fmt.Sprintf("%s-%d", base, repos.Add(1)) }

func server(t *testing.T) *Server {
	t.Helper()
	if shared == nil {
		t.Skip(skipReason)
	}
	return shared
}

func TestStartStopLeavesNoProcess(t *testing.T) {
	server(t)
	ctx := context.Background()
	s, err := Start(ctx, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	if !alive(pid) {
		t.Fatalf("gitea pid %d not running after Start", pid)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if alive(pid) {
		t.Fatalf("gitea pid %d still exists after Stop", pid)
	}
	if left := groupMembers(pid); len(left) > 0 {
		t.Fatalf("processes left in gitea's group: %v", left)
	}
}

func TestCommitWebhookAndStatusesReadBack(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	deliveries := make(chan *http.Request, 4)
	bodies := make(chan []byte, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		deliveries <- r
		bodies <- b
	}))
	defer hook.Close()

	repo := repoName("harness")
	if _, err := s.CreateRepo(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePushWebhook(ctx, repo, hook.URL+"/hook", "s3cret"); err != nil {
		t.Fatal(err)
	}
	pushed := time.Now()
	sha, err := s.Commit(ctx, repo, map[string]string{"README.md": "hello\n"}, "first")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-deliveries:
		body := <-bodies
		t.Logf("webhook delivered %v after push", time.Since(pushed).Round(time.Millisecond))
		mac := hmac.New(sha256.New, []byte("s3cret"))
		mac.Write(body)
		if got, want := r.Header.Get("X-Gitea-Signature"), hex.EncodeToString(mac.Sum(nil)); got != want {
			t.Fatalf("signature %q, want %q", got, want)
		}
		if !strings.Contains(string(body), sha) {
			t.Fatalf("push payload does not name %s", sha)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook delivery within 30s")
	}

	post := map[string]string{"state": "success", "context": "harness/check", "description": "ok"}
	if err := s.api(ctx, http.MethodPost, s.repoPath(repo)+"/statuses/"+sha, post, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.CommitStatuses(ctx, repo, sha)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Context != "harness/check" || got[0].State != "success" {
		t.Fatalf("statuses = %+v", got)
	}
}

func TestRestartKeepsDataAndPort(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	repo := repoName("survives")
	if _, err := s.CreateRepo(ctx, repo); err != nil {
		t.Fatal(err)
	}
	url, oldPID := s.URL, s.PID()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if s.URL != url || s.PID() == oldPID || alive(oldPID) {
		t.Fatalf("restart: url %s→%s pid %d→%d", url, s.URL, oldPID, s.PID())
	}
	if _, err := s.Commit(ctx, repo, map[string]string{"a": "b\n"}, "after restart"); err != nil {
		t.Fatal(err)
	}
}

// alive reports whether pid exists (a zombie would count: Stop must reap).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

// groupMembers lists the processes whose process group is pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}
