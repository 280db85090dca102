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
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

// TestATenantsNextBuildRunsInTheWorkerOfItsLast: a worker that answered
// waits for its tenant's next build, with remote bases or without, so
// that a change pays for no process start; another tenant gets a worker
// of its own.
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
	_, err = p.Build(t.Context(), "testdata", "fine", a)
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.started.Load(), "builds with remote bases and without run in the tenant's one worker")
	assert.Equal(t, 2, p.idleCount(), "one idle worker per tenant")

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

// TestAChangesBuildRunsInTheWorkerOfItsFetch: a tenant's fetches and
// builds, one after the other, run in one process, which is online for
// each fetch again after a build that ran offline; another tenant's build
// gets a process of its own.
func TestAChangesBuildRunsInTheWorkerOfItsFetch(t *testing.T) {
	skipOffLinux(t)
	bare, o, secret := gitServer(t)
	p := &Pool{}
	t.Cleanup(p.Close)
	for i := range 2 {
		gittest.ImportCommit(t, bare, "main", gittest.Text("app/cm.yaml", configMap),
			gittest.Text("app/kustomization.yaml", "resources:\n- cm.yaml\n"), gittest.Text("round", strconv.Itoa(i)))
		res, err := p.Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
		require.NoError(t, err, "a fetch after an offline build is online")
		require.True(t, res.Fetched)
		o.LastRevision = res.Revision
		objs, err := p.Build(t.Context(), res.Dir, "app", render.Options{Tenant: "team-a"})
		require.NoError(t, err)
		assert.Len(t, objs, 1)
	}
	assert.EqualValues(t, 1, p.started.Load(), "two changes of one tenant, each a fetch and a build, one process")

	_, err := p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-b"})
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.started.Load(), "another tenant's build never runs in a tenant's worker")
}

// TestAWorkerIsOfflineExactlyForItsBuildsWithRemoteBasesOff: the network
// switch follows each request: offline (no HTTP, no git) for a build with
// remote bases off, online again, with the process's own transport and
// PATH, for a fetch or a build with remote bases on.
func TestAWorkerIsOfflineExactlyForItsBuildsWithRemoteBasesOff(t *testing.T) {
	skipOffLinux(t)
	transport, client, path := http.DefaultTransport, http.DefaultClient.Transport, os.Getenv("PATH")
	t.Cleanup(func() {
		network.set(true)
		http.DefaultTransport, http.DefaultClient.Transport = transport, client
		_ = os.Setenv("PATH", path)
	})
	isOnline := func() bool {
		_, err := exec.LookPath("git")
		gitFound := err == nil
		refused := http.DefaultTransport != transport
		require.Equal(t, gitFound, !refused, "git and HTTP are switched together")
		return gitFound
	}
	steps := []struct {
		req    request
		online bool
	}{
		{request{Fetch: &fetchRequest{}, MaxFileSize: -1}, true},
		{request{Build: &buildRequest{}, MaxFileSize: -1}, false},
		{request{Build: &buildRequest{}, MaxFileSize: -1}, false},
		{request{Fetch: &fetchRequest{}, MaxFileSize: -1}, true},
		{request{Build: &buildRequest{AllowRemoteBases: true}, MaxFileSize: -1}, true},
		{request{Build: &buildRequest{}, MaxFileSize: -1}, false},
		{request{Build: &buildRequest{AllowRemoteBases: true}, MaxFileSize: -1}, true},
	}
	for i, s := range steps {
		require.NoError(t, enter(s.req))
		assert.Equal(t, s.online, isOnline(), "step %d", i)
	}
	assert.Equal(t, path, os.Getenv("PATH"), "the process's own PATH is back")
	assert.Equal(t, client, http.DefaultClient.Transport)
}

// TestAWorkerServesNoRequestThatWouldRaiseItsFileSizeLimit: a process can
// only lower its file size limit, so a tenant's idle worker serves a
// request only when the limit it asks for is not above the worker's.
func TestAWorkerServesNoRequestThatWouldRaiseItsFileSizeLimit(t *testing.T) {
	fresh, built, big := &proc{fileSize: -1}, &proc{fileSize: -1}, &proc{fileSize: -1}
	built.limitFiles(0)
	big.limitFiles(2 * fileSize)
	unbounded := request{Fetch: &fetchRequest{}, MaxFileSize: -1}
	small := request{Fetch: &fetchRequest{}, MaxFileSize: 64 << 20}
	large := request{Fetch: &fetchRequest{}, MaxFileSize: 2 * fileSize}
	assert.True(t, fresh.fits(unbounded))
	assert.True(t, fresh.fits(large))
	assert.False(t, built.fits(unbounded), "an unbounded fetch after a build")
	assert.True(t, built.fits(small), "a fetch whose files fit the build's limit")
	assert.False(t, built.fits(large))
	assert.True(t, big.fits(request{Build: &buildRequest{}}), "a build lowers the limit")
	assert.True(t, big.fits(large))
}
