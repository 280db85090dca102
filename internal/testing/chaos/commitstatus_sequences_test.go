/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package chaos

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// TestPausedLeaderPostsNoStatusTwice: a leader paused longer than its lease
// (SIGSTOP, 15 s) goes on acting after SIGCONT until its next renewal
// fails, next to the replica that took the lease meanwhile; the two never
// post the same commit status twice in a row.
// docs/spec/v1alpha1/gitrepositories.md, "Commit statuses": never duplicated.
func TestPausedLeaderPostsNoStatusTwice(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	ctx := t.Context()
	e, m := startRegressionEnv(t)

	old := e.leader()
	if old == nil {
		t.Fatal("no leader")
	}
	if err := old.proc.Pause(); err != nil {
		t.Fatal(err)
	}
	e.tl.logf(global, "SIGSTOP %s (leader)", old.name)
	deadline := time.Now().Add(45 * time.Second)
	for e.leader() == nil || e.leader() == old {
		if time.Now().After(deadline) {
			t.Fatal("no other replica took the lease")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := old.proc.Resume(); err != nil {
		t.Fatal(err)
	}
	e.tl.logf(global, "SIGCONT %s; %s leads", old.name, e.leader().name)
	// Right after SIGCONT: the old leader still believes it leads.
	for _, name := range []string{"orders", "clicks"} {
		s := m.specs[name]
		s.Image++
		m.specs[name] = s
	}
	commit := e.pushAndLog(ctx, e.tl, m.commit(0, repoOf("alpha"), pushImage, "orders"))
	if commit == nil {
		t.Fatal("push failed")
	}
	if why := e.settle(ctx, e.tl, 3*time.Minute); why != "" {
		t.Fatalf("did not come to rest: %s", why)
	}
	st, err := e.forge.CommitStatuses(ctx, "alpha", commit.SHA)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(st, func(a, b int) bool { return st[a].ID < st[b].ID })
	for ctxName, list := range groupByContext(st) {
		for i := 1; i < len(list); i++ {
			if list[i].State == list[i-1].State && list[i].Description == list[i-1].Description {
				t.Errorf("%s posted twice on %s: %s %q", ctxName, short(commit.Revision), list[i].State, list[i].Description)
			}
		}
	}
	for _, name := range []string{"orders", "clicks"} {
		p := &v1alpha1.FlinkBlueGreenDeployment{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: name}, p); err != nil {
			t.Fatal(err)
		}
		if p.Status.ActiveRevision != commit.Revision {
			t.Errorf("%s runs %s, not %s", name, p.Status.ActiveRevision, commit.Revision)
		}
	}
}

// TestSupersededSyncVerdictIsPosted: a commit whose sync "pending" reached
// the forge, and whose success did not before a newer commit was
// attempted, still gets its verdict, though the newer commit is now
// status.lastAttemptedRevision. docs/spec/v1alpha1/gitrepositories.md,
// "Commit statuses": never lost. Here the forge becomes unreachable
// between the two statuses of commit A (the link to Gitea is cut), commit
// B is applied meanwhile, and the forge comes back.
func TestSupersededSyncVerdictIsPosted(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	ctx := t.Context()
	e, m := startRegressionEnv(t)
	beta := repoOf("beta")
	syncCtx := status.SyncContext(beta.Namespace, beta.Name)

	// Slow: a status takes seconds to post, so that A's pending is on
	// Gitea well before its success is sent.
	e.giteaLink.SetLatency(1500 * time.Millisecond)
	m.settings["beta"]++
	a := e.pushAndLog(ctx, e.tl, m.commit(0, beta, pushSettings, ""))
	if a == nil {
		t.Fatal("push failed")
	}
	waitStatus(t, e, a, syncCtx, func(list []string) bool { return len(list) > 0 })
	e.giteaLink.SetDown(true)
	if got := syncStates(t, e, a, syncCtx); slices.Contains(got, "success") {
		t.Fatalf("A's success was posted before the link was cut (%v): the setup lost the race", got)
	}
	e.giteaLink.SetLatency(0)
	m.settings["beta"]++
	b := e.pushAndLog(ctx, e.tl, m.commit(0, beta, pushSettings, ""))
	if b == nil {
		t.Fatal("push failed")
	}
	waitApplied(t, e, beta, b.Revision)
	e.giteaLink.SetDown(false)
	waitStatus(t, e, b, syncCtx, func(list []string) bool { return len(list) > 0 && list[len(list)-1] == "success" })
	time.Sleep(gitInterval) // a poll later, any late status is there
	got := syncStates(t, e, a, syncCtx)
	if len(got) == 0 || got[len(got)-1] == "pending" {
		t.Fatalf("A (applied, then superseded by B) ends with sync statuses %v: left pending", got)
	}
}

// TestLiveRevisionKeepsItsSuccess: a revision that went live (success
// "clicks-blue active") keeps its success when the active child is deleted
// by hand, the job stays FAILING with that revision as its target, and
// enough later commits (each stamped on the job) push its record out of
// status.commitStatuses (the newest 8). docs/spec/v1alpha1/flinkbluegreendeployments.md,
// "Commit statuses": a success is final; status.liveRevisions holds it.
func TestLiveRevisionKeepsItsSuccess(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	ctx := t.Context()
	e, m := startRegressionEnv(t)
	alpha := repoOf("alpha")
	rollout := status.RolloutContext(alpha.Namespace, "clicks")
	live := e.git.head("alpha")
	waitStatus(t, e, live, rollout, func(l []string) bool { return len(l) > 0 && l[len(l)-1] == "success" })

	blue := &unstructured.Unstructured{}
	blue.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	blue.SetNamespace(alpha.Namespace)
	blue.SetName("clicks-blue")
	if err := e.c.Delete(ctx, blue); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		m.settings["alpha"]++
		c := e.pushAndLog(ctx, e.tl, m.commit(0, alpha, pushSettings, ""))
		if c == nil {
			t.Fatal("push failed")
		}
		waitApplied(t, e, alpha, c.Revision)
		waitStatus(t, e, c, rollout, func(l []string) bool { return len(l) > 0 })
		if got := syncStates(t, e, live, rollout); got[len(got)-1] != "success" {
			t.Fatalf("after %d later commits, %s (live) has rollout statuses %v", i+1, short(live.Revision), got)
		}
	}
}

func syncStates(t *testing.T, e *env, c *Commit, ctxName string) []string {
	t.Helper()
	st, err := e.forge.CommitStatuses(t.Context(), c.Repo, c.SHA)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(st, func(a, b int) bool { return st[a].ID < st[b].ID })
	var out []string
	for _, s := range st {
		if s.Context == ctxName {
			out = append(out, s.State)
		}
	}
	return out
}

func waitStatus(t *testing.T, e *env, c *Commit, ctxName string, ok func([]string) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !ok(syncStates(t, e, c, ctxName)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s on %s: %v", ctxName, short(c.Revision), syncStates(t, e, c, ctxName))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitApplied(t *testing.T, e *env, r repoDef, rev string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		gr := &v1alpha1.GitRepository{}
		if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, gr); err == nil && gr.Status.LastAppliedRevision == rev {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not apply %s", r.Name, short(rev))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startRegressionEnv starts the system with the seed commits, the person
// who promotes Manual jobs and the recorder; the run's logs stay in the
// test's directory, printed when it fails.
func startRegressionEnv(t *testing.T) (*env, *model) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	logFile, err := os.Create(filepath.Join(dir, "chaos.log"))
	if err != nil {
		t.Fatal(err)
	}
	tl := newTimeline(logFile)
	e, err := startEnv(ctx, Options{}.withDefaults(), dir, tl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = e.stop()
		logFile.Close()
		if t.Failed() {
			data, _ := os.ReadFile(filepath.Join(dir, "chaos.log"))
			t.Logf("timeline:\n%s", data)
		}
	})
	m := newModel(newRand(1, streamPushes))
	if err := e.startSources(ctx, &Schedule{Seeds: m.seeds()}, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(e, tl, newPerson(e, tl, 1))
	go rec.run(ctx)
	return e, m
}
