//go:build !race

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Not under the race detector: its runtime reserves shadow memory that a
// worker's data limit does not leave it, so the worker there measures the
// detector, not the build (make test runs this test).

package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/worker"
)

// hostile reads a tree of internal/worker/testdata/hostile.
func hostile(t *testing.T, name string) map[string]string {
	t.Helper()
	dir := filepath.Join("..", "worker", "testdata", "hostile", name)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

// hostileCorpus names the trees of internal/worker/testdata/hostile.
func hostileCorpus(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "worker", "testdata", "hostile"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.NotEmpty(t, names)
	return names
}

// TestHostileCorpusFailsOnlyItsOwnGitRepository: one controller renders
// every tenant. Each kustomization of the hostile corpus (a stack overflow
// in kustomize, memory amplification by vars, replacements and aliases, a
// schema that spins) ends the worker that builds it, and a repository of
// millions of tiny objects is refused before go-git indexes it: each fails
// only its own GitRepository, with the limit named, while the controller
// (this process) lives on with its heap flat, and another namespace's
// commit is applied. A restarted controller does not build a revision
// whose worker died again; a requested reconcile does.
func TestHostileCorpusFailsOnlyItsOwnGitRepository(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("render workers run on Linux only")
	}
	pid := os.Getpid()
	heapBefore := heapInUse()
	names := hostileCorpus(t)
	fine, packNS := newNamespace(t), newNamespace(t)
	var nss []string
	for range names {
		nss = append(nss, newNamespace(t))
	}
	opts := reconcile.Options{AllowInsecureHTTP: true, CacheDir: t.TempDir(), Concurrent: 4,
		RenderWorker: &worker.Pool{MaxMemory: 256 << 20, MaxCPU: 10 * time.Second},
		Render:       render.Options{Limits: render.Limits{MaxFileReads: -1, MaxBytes: -1, MaxObjects: -1}}}
	start := func() *reconciletest.Manager {
		mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: fine, Namespaces: append([]string{packNS}, nss...), Controllers: &opts})
		require.NoError(t, err)
		return mgr
	}
	mgr := start()

	bad := make([]*gitFixture, len(names))
	revs := make([]string, len(names))
	for i, name := range names {
		bad[i] = newGitFixture(t, nss[i])
		revs[i] = bad[i].push(hostile(t, name))
		bad[i].create("s3cr3t-pass")
	}
	pack := newGitFixture(t, packNS)
	gittest.TinyObjects(t, pack.repo.Bare, "main", 60_000)
	pack.create("s3cr3t-pass")
	good := newGitFixture(t, fine)
	rev := good.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	good.create("s3cr3t-pass")

	for i, name := range names {
		c := bad[i].waitCondition(v1alpha1.BuildFailedCondition, "render limit exceeded")
		assert.Regexp(t, "worker process|time limit", c.Message, name)
		f := bad[i].get().Status.LastWorkerFailure
		if assert.NotNil(t, f, name) {
			assert.Equal(t, v1alpha1.WorkerStageBuild, f.Stage, name)
			assert.Equal(t, revs[i], f.Revision, name)
		}
	}
	pack.waitCondition(v1alpha1.FetchFailedCondition, "object count limit (--git-max-objects=50000)")
	good.waitApplied(rev)
	assert.Equal(t, pid, os.Getpid(), "the controller lives")
	grown := heapInUse() - heapBefore
	t.Logf("controller heap grew %d MiB; VmRSS %s", grown>>20, procStatus("VmRSS"))
	assert.Less(t, grown, int64(64<<20), "the builds' memory is the workers', not the controller's")

	mgr.Stop()
	mgr = start()
	t.Cleanup(func() { mgr.Stop() })
	bad[0].waitCondition(v1alpha1.BuildFailedCondition, "not built again until the revision")
	bad[0].requestReconcile()
	eventually(t, nss[0], "built again on request", func() bool {
		c := apimeta.FindStatusCondition(bad[0].get().Status.Conditions, v1alpha1.BuildFailedCondition)
		return c != nil && !strings.Contains(c.Message, "not built again") &&
			bad[0].get().Status.LastHandledReconcileAt == bad[0].get().Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
	})
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// procStatus is a field of /proc/self/status, as written there.
func procStatus(field string) string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// TestPollOfAnUnchangedRefStartsNoWorker: a reconcile whose ref still
// resolves to the commit checked out lists the remote's refs in the
// controller and runs no fetch in a worker; a new commit is fetched in
// one.
func TestPollOfAnUnchangedRefStartsNoWorker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("render workers run on Linux only")
	}
	ns := newNamespace(t)
	pool := &worker.Pool{Slots: 1}
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true, RenderWorker: pool})
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")
	f.waitApplied(rev)

	fetches := pool.Fetches()
	f.requestReconcile()
	eventually(t, ns, "the requested reconcile handled", func() bool {
		gr := f.get()
		return gr.Status.LastHandledReconcileAt == gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
	})
	assert.Equal(t, fetches, pool.Fetches(), "no fetch worker for an unchanged ref")

	rev = f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "2")})
	f.requestReconcile()
	f.waitApplied(rev)
	assert.Greater(t, pool.Fetches(), fetches, "a new commit is fetched in a worker")
}

// TestACreationListsTheRefsOnce: a GitRepository's first fetch lists the
// remote's refs once and downloads once; a creation and a later change
// are both listed by the controller's poll, whose listing the worker's
// download reuses.
func TestACreationListsTheRefsOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("render workers run on Linux only")
	}
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true, RenderWorker: &worker.Pool{Slots: 1}})
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")
	f.waitApplied(rev)
	assert.EqualValues(t, 1, f.srv.Listings(), "one ref listing for the creation")
	assert.EqualValues(t, 1, f.srv.UploadPacks(), "one download")

	rev = f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "2")})
	f.requestReconcile()
	f.waitApplied(rev)
	assert.EqualValues(t, 2, f.srv.Listings(), "one ref listing for a change: the worker's download reuses the poll's")
	assert.EqualValues(t, 2, f.srv.UploadPacks())
}

// TestAHostileSSHServerEndsOnlyTheWorkerThatListsIt: a poll of a
// repository over SSH lists its refs in a worker, whose limits (memory,
// spec.timeout) end a ref advertisement of 512 MiB, and not in the
// controller, where nothing bounds what an SSH server sends: the
// controller's heap stays flat and the GitRepository says which limit the
// fetch hit.
func TestAHostileSSHServerEndsOnlyTheWorkerThatListsIt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("render workers run on Linux only")
	}
	ns := newNamespace(t)
	pool := &worker.Pool{MaxMemory: 256 << 20}
	startControllerWithOptions(t, ns, reconcile.Options{RenderWorker: pool})
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	srv := f.createOverSSH(15 * time.Second)
	f.waitApplied(rev)

	heapBefore, fetches := heapInUse(), pool.Fetches()
	srv.Flood.Store(true)
	f.requestReconcile()
	c := f.waitCondition(v1alpha1.FetchFailedCondition, "ssh://")
	t.Logf("condition: %s: %s", c.Reason, c.Message)
	assert.Contains(t, []string{"LimitExceeded", "Timeout"}, c.Reason)
	assert.Greater(t, pool.Fetches(), fetches, "the poll listed in a worker")
	grown := heapInUse() - heapBefore
	t.Logf("controller heap grew %d MiB", grown>>20)
	assert.Less(t, grown, int64(64<<20), "the listing's memory is the worker's, not the controller's")
	assert.True(t, configMapExists(ns, "a"), "what was applied stays")
}

// TestRefPatternHeadsOverSSHAreListedInAWorker: the pull request planner
// lists a repository's refs over SSH in the namespace's worker, as a
// poll does, and plans the heads it finds.
func TestRefPatternHeadsOverSSHAreListedInAWorker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("render workers run on Linux only")
	}
	ns := newNamespace(t)
	pool := &worker.Pool{}
	startControllerWithOptions(t, ns, reconcile.Options{RenderWorker: pool})
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.createOverSSH(15 * time.Second)
	f.waitApplied(rev)
	h1 := f.pushHead("refs/pull/1/head", map[string]string{"a.yaml": fmt.Sprintf(configMap, "a", "pr1")})
	gr := f.get()
	patch := client.MergeFrom(gr.DeepCopy())
	gr.Spec.PullRequests = &v1alpha1.PullRequestsSpec{RefPattern: "refs/pull/*/head"}
	require.NoError(t, env.Client.Patch(t.Context(), gr, patch))
	f.waitPlanned(map[int64]string{1: h1})
	assert.Positive(t, pool.Lists(), "the planner's listing ran in a worker")
}

// createOverSSH serves f's repository over SSH too and creates the
// GitRepository with that URL and a Secret with its key and known hosts.
func (f *gitFixture) createOverSSH(timeout time.Duration) *gittest.SSHServer {
	key, pub := gittest.NewKey(f.t)
	srv := gittest.ServeSSH(f.t, filepath.Dir(f.repo.Bare), pub)
	require.NoError(f.t, env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-ssh", Namespace: f.ns},
		Data:       map[string][]byte{"identity": key, "known_hosts": srv.KnownHosts()},
	}))
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.URL = srv.URL(filepath.Base(f.repo.Bare))
		gr.Spec.SecretRef = &v1alpha1.LocalObjectReference{Name: "git-ssh"}
		gr.Spec.Timeout = &metav1.Duration{Duration: timeout}
	})
	return srv
}
