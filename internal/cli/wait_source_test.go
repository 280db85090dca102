/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `wait --for-revision` refusing a commit that can never go live.

package cli

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestNormalizeGitURL(t *testing.T) {
	dir := t.TempDir()
	same := [][2]string{
		{"https://github.com/o/r", "git@github.com:o/r.git"},
		{"https://GitHub.com/o/r.git", "ssh://git@github.com:22/o/r"},
		{"http://user@host/o/r/", "https://host/o/r"},
		{"file://" + dir, dir},
		{"file://" + dir + "/.git", dir + "/"},
		// Forges name repositories without regard to case: the URL a
		// GitRepository was written with and a clone's may differ in it.
		{"https://github.com/Acme/Flink-Jobs", "git@github.com:acme/flink-jobs.git"},
	}
	for _, c := range same {
		assert.Equal(t, normalizeGitURL(c[0]), normalizeGitURL(c[1]), "%s vs %s", c[0], c[1])
	}
	differ := [][2]string{
		{"https://github.com/o/r", "https://github.com/o/other"},
		{"https://github.com/o/r", "https://gitlab.com/o/r"},
		{"file://" + dir, filepath.Join(dir, "sub")},
		{"file://" + dir + "/Jobs", filepath.Join(dir, "jobs")},
	}
	for _, c := range differ {
		assert.NotEqual(t, normalizeGitURL(c[0]), normalizeGitURL(c[1]), "%s vs %s", c[0], c[1])
	}
}

// TestWaitRefusesARevisionThatCannotGoLive: HEAD of a clone of another
// repository, or a commit not pushed, would only time out; `wait` says so
// at once (exit 2) instead.
func TestWaitRefusesARevisionThatCannotGoLive(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	upstream := fbgdRepo(t)
	bare := filepath.Join(t.TempDir(), "app.git")
	gitRun(t, "clone", "-q", "--bare", upstream.dir, bare)
	clone := &prRepo{dir: filepath.Join(t.TempDir(), "clone"), t: t}
	gitRun(t, "clone", "-q", bare, clone.dir)
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + bare, Path: "./app", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}
	wait := func(kind, name, repo string) result {
		return runCLI(t, append([]string{"wait", kind, name, "--for-revision", "HEAD", "--repo", repo, "--timeout", "30s"}, kc...)...)
	}

	// A pushed commit of a clone whose origin is the GitRepository's URL
	// (spelt differently) goes live.
	res := wait("gitrepository", "app", clone.dir)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	res = wait("fbgd", "job", clone.dir)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)

	// A commit not pushed.
	clone.write("README.md", "not pushed\n")
	head := clone.commit("local only")
	for _, k := range []string{"gitrepository app", "fbgd job"} {
		kind, name, _ := strings.Cut(k, " ")
		started := time.Now()
		res = wait(kind, name, clone.dir)
		assert.Equal(t, exitCannotAct, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
		assert.Contains(t, res.stderr, head[:12]+" is not on file://"+bare)
		assert.Contains(t, res.stderr, "push it first")
		assert.Less(t, time.Since(started), 10*time.Second, "at once, not at the timeout")
	}

	// A clone of another repository.
	other := fbgdRepo(t)
	other.write("OTHER", "another history\n")
	other.commit("another")
	other.git("remote", "add", "origin", "https://git.example.invalid/someone/else.git")
	res = wait("gitrepository", "app", other.dir)
	assert.Equal(t, exitCannotAct, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "whose remotes are not file://"+bare)
}

func gitRun(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("git", args...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// A commit not pushed is refused although the remote has refs the clone
// has not fetched (a forge's refs/pull/*/head, someone else's branch):
// only the ref the GitRepository follows can bring a commit live, and its
// tip is known here.
func TestWaitRefusesAnUnpushedCommitBesideUnfetchedRefs(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	upstream := fbgdRepo(t)
	bare := filepath.Join(t.TempDir(), "app.git")
	gitRun(t, "clone", "-q", "--bare", upstream.dir, bare)
	clone := &prRepo{dir: filepath.Join(t.TempDir(), "clone"), t: t}
	gitRun(t, "clone", "-q", bare, clone.dir)
	upstream.write("PR", "someone's pull request\n")
	upstream.commit("a pull request")
	upstream.git("push", "-q", bare, "HEAD:refs/pull/1/head")
	upstream.git("push", "-q", bare, "HEAD:refs/heads/feature")
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + bare, Path: "./app", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	require.NoError(t, env.Client.Create(context.Background(), gr))

	clone.write("README.md", "not pushed\n")
	head := clone.commit("local only")
	started := time.Now()
	res := runCLI(t, "wait", "gitrepository", "app", "--for-revision", "HEAD", "--repo", clone.dir, "--timeout", "20s",
		"-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, exitCannotAct, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, head[:12]+" is not on")
	assert.Less(t, time.Since(started), 10*time.Second, "at once, not at the timeout")
}
