/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

// TestATenantsNextBuildRunsInTheWorkerOfItsLast: a worker that answered
// waits for its tenant's next build of the same kind, so that a change
// pays for no process start; another tenant, or a build that needs the
// network the first worker shut itself off from, gets a worker of its own.
func TestATenantsNextBuildRunsInTheWorkerOfItsLast(t *testing.T) {
	skipOffLinux(t)
	p := &Pool{}
	t.Cleanup(p.Close)
	a := render.Options{Tenant: "team-a"}
	for range 3 {
		_, err := p.Build(t.Context(), "testdata", "fine", a)
		require.NoError(t, err)
	}
	assert.EqualValues(t, 1, p.started.Load(), "three builds of one tenant, one process")
	assert.Equal(t, 1, p.idleCount())

	_, err := p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-b"})
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.started.Load(), "another tenant never shares a worker")

	online := a
	online.AllowRemoteBases = true
	_, err = p.Build(t.Context(), "testdata", "fine", online)
	require.NoError(t, err)
	assert.EqualValues(t, 3, p.started.Load(), "an offline worker does not serve a build with remote bases")
	assert.Equal(t, 3, p.idleCount())

	p.Close()
	assert.Zero(t, p.idleCount(), "Close ends the idle workers")
}

// TestAWorkerThatDiedIsNotReused: a tenant's build that ends its worker
// (a limit) fails alone; the tenant's next build gets a new worker, and
// the limit is named.
func TestAWorkerThatDiedIsNotReused(t *testing.T) {
	skipOffLinux(t)
	p := &Pool{MaxMemory: 256 << 20}
	t.Cleanup(p.Close)
	o := render.Options{Tenant: "team-a", Limits: unbounded}
	_, err := p.Build(t.Context(), "testdata", "fine", o)
	require.NoError(t, err)
	_, err = p.Build(t.Context(), "testdata/hostile", "memory-bomb", o)
	var le *render.LimitError
	require.ErrorAs(t, err, &le, "%v", err)
	// Its memory limit, or the deadline on a machine too busy to reach it.
	assert.Contains(t, []string{render.LimitMemory, render.LimitTime}, le.Limit, "%v", err)
	assert.Zero(t, p.idleCount())
	_, err = p.Build(t.Context(), "testdata", "fine", o)
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.started.Load())
}

// TestAnIdleWorkerKilledWhileItWaitsCostsTheNextBuildNothing: the kernel's
// OOM killer takes idle workers first (their score is the highest); the
// tenant's next build then runs in another one, without an error.
func TestAnIdleWorkerKilledWhileItWaitsCostsTheNextBuildNothing(t *testing.T) {
	skipOffLinux(t)
	p := &Pool{}
	t.Cleanup(p.Close)
	o := render.Options{Tenant: "team-a"}
	_, err := p.Build(t.Context(), "testdata", "fine", o)
	require.NoError(t, err)
	p.mu.Lock()
	var idle *proc
	for _, e := range p.idle {
		idle = e.pr
	}
	p.mu.Unlock()
	require.NotNil(t, idle)
	require.NoError(t, syscall.Kill(idle.cmd.Process.Pid, syscall.SIGKILL))
	<-idle.exited
	_, err = p.Build(t.Context(), "testdata", "fine", o)
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.started.Load())
}

// TestAnAnswerPastItsBoundFailsItsBuild: a worker's answer is read up to
// MaxAnswer bytes; past it the build fails as the worker's, and the
// worker is not kept.
func TestAnAnswerPastItsBoundFailsItsBuild(t *testing.T) {
	skipOffLinux(t)
	p := &Pool{MaxAnswer: 64}
	t.Cleanup(p.Close)
	_, err := p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-a"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than 64 bytes")
	var died *DiedError
	assert.False(t, errors.As(err, &died), "not recorded against the revision: %v", err)
	assert.Zero(t, p.idleCount())
}

// TestAChangesBuildRunsInTheWorkerOfItsFetch: a tenant's build takes the
// worker its fetch ran in (one process per change), which then fetches
// nothing more: the tenant's next fetch, and another tenant's build, get
// workers of their own.
func TestAChangesBuildRunsInTheWorkerOfItsFetch(t *testing.T) {
	skipOffLinux(t)
	bare, o, secret := gitServer(t)
	gittest.ImportCommit(t, bare, "main", gittest.Text("app/cm.yaml", configMap),
		gittest.Text("app/kustomization.yaml", "resources:\n- cm.yaml\n"))
	p := &Pool{}
	t.Cleanup(p.Close)
	res, err := p.Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
	require.NoError(t, err)
	objs, err := p.Build(t.Context(), res.Dir, "app", render.Options{Tenant: "team-a"})
	require.NoError(t, err)
	assert.Len(t, objs, 1)
	assert.EqualValues(t, 1, p.started.Load(), "the fetch and the build of one change, one process")

	_, err = p.Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.started.Load(), "a worker that built offline fetches nothing")

	_, err = p.Build(t.Context(), res.Dir, "app", render.Options{Tenant: "team-b"})
	require.NoError(t, err)
	assert.EqualValues(t, 3, p.started.Load(), "another tenant's build never runs in a tenant's fetch worker")
}

// TestAWorkerGoesOfflineForGoodAtItsFirstOfflineBuild: after a fetch, a
// build with remote bases off takes the process offline; a fetch or a
// build with remote bases on is refused after it.
func TestAWorkerGoesOfflineForGoodAtItsFirstOfflineBuild(t *testing.T) {
	skipOffLinux(t)
	transport, client, path := http.DefaultTransport, http.DefaultClient.Transport, os.Getenv("PATH")
	t.Cleanup(func() {
		http.DefaultTransport, http.DefaultClient.Transport = transport, client
		_ = os.Setenv("PATH", path)
		wentOffline = false
	})
	require.NoError(t, enter(request{Fetch: &fetchRequest{}, MaxFileSize: -1}))
	require.NoError(t, enter(request{Build: &buildRequest{AllowRemoteBases: true}, MaxFileSize: -1}))
	assert.Equal(t, path, os.Getenv("PATH"), "still online")
	require.NoError(t, enter(request{Build: &buildRequest{}, MaxFileSize: -1}))
	_, err := exec.LookPath("git")
	assert.ErrorIs(t, err, exec.ErrNotFound, "offline: no git")
	assert.Error(t, enter(request{Fetch: &fetchRequest{}, MaxFileSize: -1}))
	assert.Error(t, enter(request{Build: &buildRequest{AllowRemoteBases: true}, MaxFileSize: -1}))
	assert.NoError(t, enter(request{Build: &buildRequest{}, MaxFileSize: -1}))
}
