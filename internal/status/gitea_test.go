/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// forge is the real Gitea shared by this package's tests; nil when skipped.
var (
	forge      *gitea.Server
	skipReason string
)

// noServersEnv, set by make test-unit, leaves the tests against a real
// Gitea out (skipped): the fast loop starts no server.
const noServersEnv = "BGGITOPS_TEST_UNIT"

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	if os.Getenv(noServersEnv) != "" {
		skipReason = "real Gitea tests: not run by make test-unit (" + noServersEnv + " set)"
		forge = &gitea.Server{} // its tests skip in giteaRepo, before they use it
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := gitea.Start(ctx, gitea.Options{})
	switch {
	case gitea.Skippable(err):
		skipReason = "real Gitea tests: " + err.Error()
	case err != nil:
		fmt.Fprintln(os.Stderr, "start gitea:", err)
		return 1
	default:
		forge = s
		defer s.Stop()
	}
	if forge == nil {
		forge = &gitea.Server{} // its tests skip in giteaRepo, before they use it
	}
	return m.Run()
}

var repos atomic.Int32

// giteaRepo creates a repository with one pushed commit and returns a
// provider for it and the commit's SHA.
func giteaRepo(t *testing.T, token string) (Provider, string) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	ctx := context.Background()
	// Unique per run: with -count=2 the second run would otherwise meet the
	// first run's repository (409 Conflict).
	name := fmt.Sprintf("%s-%d", strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), repos.Add(1))
	if _, err := forge.CreateRepo(ctx, name); err != nil {
		t.Fatal(err)
	}
	sha, err := forge.Commit(ctx, name, map[string]string{"kustomization.yaml": "resources: []\n"}, "init")
	if err != nil {
		t.Fatal(err)
	}
	return giteaFor(t, forge.Repository(name), token), sha
}

func giteaFor(t *testing.T, repository, token string) Provider {
	t.Helper()
	p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
		Repository: repository}, token, Options{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func repoName(p Provider) string { return p.(*giteaProvider).repo }

func TestGiteaPostAndList(t *testing.T) {
	p, sha := giteaRepo(t, forge.Token)
	ctx := context.Background()
	sync, rollout := SyncContext("ns", "repo"), RolloutContext("ns", "job")
	for _, s := range []Entry{
		{Context: sync, State: StatePending, Description: "applying"},
		{Context: sync, State: StateSuccess, Description: "applied", TargetURL: "http://127.0.0.1/x"},
		{Context: rollout, State: StateFailure, Description: "aborted: green not ready within 10m; blue still active"},
	} {
		if err := p.Post(ctx, sha, s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.List(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Entry{
		sync:    {Context: sync, State: StateSuccess, Description: "applied", TargetURL: "http://127.0.0.1/x"},
		rollout: {Context: rollout, State: StateFailure, Description: "aborted: green not ready within 10m; blue still active"},
	}
	if len(got) != 2 || got[0] != want[got[0].Context] || got[1] != want[got[1].Context] {
		t.Fatalf("List = %+v, want %+v", got, want)
	}
	all, err := forge.CommitStatuses(ctx, repoName(p), sha)
	if err != nil || len(all) != 3 {
		t.Fatalf("Gitea holds %d statuses (%v), want 3", len(all), err)
	}
}

func TestGiteaSyncNeverDuplicates(t *testing.T) {
	p, sha := giteaRepo(t, forge.Token)
	ctx := context.Background()
	rev := "main@sha1:" + sha
	desired := []Desired{
		{Revision: rev, Status: Entry{Context: SyncContext("ns", "repo"), State: StateSuccess, Description: "applied"}},
		{Revision: rev, Status: Entry{Context: RolloutContext("ns", "job"), State: StatePending, Description: "savepointing blue"}},
	}
	for i := 0; i < 3; i++ {
		recs, err := Sync(ctx, p, desired)
		if err != nil || len(recs) != 2 {
			t.Fatalf("sync %d: %v, %+v", i, err, recs)
		}
	}
	assertGiteaCount(t, repoName(p), sha, 2)
}

func TestGiteaWrongToken(t *testing.T) {
	const bad = "0123456789abcdef0123456789abcdef01234567"
	good, sha := giteaRepo(t, forge.Token)
	p := giteaFor(t, forge.Repository(repoName(good)), bad)
	err := p.Post(context.Background(), sha, Entry{Context: "c", State: StateSuccess})
	assertClass(t, err, ErrUnauthorized, bad)
	_, err = p.List(context.Background(), sha)
	assertClass(t, err, ErrUnauthorized, bad)
}

func TestGiteaWrongRepository(t *testing.T) {
	_, sha := giteaRepo(t, forge.Token)
	p := giteaFor(t, forge.Repository("no-such-repo"), forge.Token)
	err := p.Post(context.Background(), sha, Entry{Context: "c", State: StateSuccess})
	assertClass(t, err, ErrNotFound, forge.Token)
	_, err = p.List(context.Background(), sha)
	assertClass(t, err, ErrNotFound, forge.Token)
}

// An outage leaves the status unacknowledged; once Gitea is back the next
// Sync posts it, once.
func TestGiteaOutageThenRecovery(t *testing.T) {
	p, sha := giteaRepo(t, forge.Token)
	ctx := context.Background()
	desired := []Desired{{Revision: "sha1:" + sha, Status: Entry{Context: RolloutContext("ns", "job"),
		State: StateSuccess, Description: "green active"}}}
	if err := forge.StopProcess(); err != nil {
		t.Fatal(err)
	}
	recs, err := Sync(ctx, p, desired)
	var rl *RateLimitedError
	if err == nil || len(recs) != 0 || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrNotFound) || errors.As(err, &rl) {
		t.Fatalf("during outage: %+v, %v; want a transient error and nothing acknowledged", recs, err)
	}
	if err := forge.Serve(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if recs, err = Sync(ctx, p, desired); err != nil || len(recs) != 1 {
			t.Fatalf("after outage: %+v, %v", recs, err)
		}
	}
	assertGiteaCount(t, repoName(p), sha, 1)
}

func assertGiteaCount(t *testing.T, repo, sha string, n int) {
	t.Helper()
	all, err := forge.CommitStatuses(context.Background(), repo, sha)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("Gitea holds %d statuses, want %d: %+v", len(all), n, all)
	}
}

func assertClass(t *testing.T, err, target error, token string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got %v, want %v", err, target)
	}
	if strings.Contains(err.Error(), token) {
		t.Fatalf("error leaks the token: %v", err)
	}
	t.Logf("error as a user reads it: %v", err)
}
