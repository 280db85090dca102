/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/render"
)

// unbounded leaves a build only the worker's limits: the hostile inputs
// are held by the process bounds, not by render's own.
var unbounded = render.Limits{Timeout: 20 * time.Second, MaxFileReads: -1, MaxBytes: -1, MaxObjects: -1}

// TestHostileInputsEndAsALimitOfTheirBuild: each input of
// testdata/hostile ends its worker, and the build fails with the limit it
// hit; this process (the controller's stand-in) is untouched and builds a
// fine tree next.
func TestHostileInputsEndAsALimitOfTheirBuild(t *testing.T) {
	skipOffLinux(t)
	entries, err := os.ReadDir("testdata/hostile")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	p := &Pool{MaxMemory: 256 << 20, MaxCPU: 10 * time.Second}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			_, err := p.Build(t.Context(), "testdata/hostile", e.Name(), render.Options{Limits: unbounded})
			var le *render.LimitError
			require.ErrorAs(t, err, &le, "%v", err)
			// A spin ends at its CPU limit, or at the deadline when other
			// work leaves it too little CPU to reach it first.
			assert.Contains(t, []string{render.LimitMemory, render.LimitStack, render.LimitCPU, render.LimitTime}, le.Limit, "%v", err)
			var died *DiedError
			assert.ErrorAs(t, err, &died, "the worker died, nothing else")
			if le.Limit == render.LimitMemory {
				assert.Positive(t, le.Peak, "the peak is measured")
			}
			objs, err := p.Build(t.Context(), "testdata", "fine", render.Options{})
			require.NoError(t, err)
			assert.Len(t, objs, 1)
		})
	}
}

// TestWorkerIsKilledAtTheDeadline: a build that waits for ever (a remote
// base whose server never answers) ends at its time limit, the worker
// killed, its slot free for the next build.
func TestWorkerIsKilledAtTheDeadline(t *testing.T) {
	p := &Pool{Slots: 1}
	o := render.Options{AllowRemoteBases: true, Limits: render.Limits{Timeout: 2 * time.Second}}
	_, err := p.Build(t.Context(), hangingTree(t), "app", o)
	var le *render.LimitError
	require.ErrorAs(t, err, &le, "%v", err)
	assert.Equal(t, render.LimitTime, le.Limit)
	assert.False(t, le.Waiting, "the build's own time")
	_, err = p.Build(t.Context(), "testdata", "fine", render.Options{})
	require.NoError(t, err, "the slot is free again")
}

// TestWorkerCPULimit: a worker that computes past its CPU time limit is
// ended by the kernel, and the build says so.
func TestWorkerCPULimit(t *testing.T) {
	skipOffLinux(t)
	p := &Pool{MaxCPU: time.Second, MaxMemory: 8 << 30} // memory far past what one CPU second fills
	_, err := p.Build(t.Context(), "testdata/hostile", "memory-bomb", render.Options{Limits: unbounded})
	var le *render.LimitError
	require.ErrorAs(t, err, &le, "%v", err)
	assert.Equal(t, render.LimitCPU, le.Limit, "%v", err)
	t.Logf("peak %d MiB", le.Peak>>20)
}

// TestBuildsOfOneTenantRunOneAtATime: a tenant's second build waits for
// its first, and its time limit counts the wait (Waiting), while another
// tenant's build runs.
func TestBuildsOfOneTenantRunOneAtATime(t *testing.T) {
	p := &Pool{Slots: 2}
	release, err := p.acquire(t.Context(), "team-a")
	require.NoError(t, err)
	_, err = p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-a", Limits: render.Limits{Timeout: 300 * time.Millisecond}})
	var le *render.LimitError
	require.ErrorAs(t, err, &le, "%v", err)
	assert.True(t, le.Waiting)
	_, err = p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-b"})
	require.NoError(t, err)
	release()
	_, err = p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-a"})
	require.NoError(t, err)
}

// TestOfflineWorkerReachesNoNetworkAndNoGit: with remote bases off a
// worker's HTTP requests are refused and it finds no git, whatever
// kustomize tries past the preflight.
func TestOfflineWorkerReachesNoNetworkAndNoGit(t *testing.T) {
	skipOffLinux(t)
	transport, client, path := http.DefaultTransport, http.DefaultClient.Transport, os.Getenv("PATH")
	t.Cleanup(func() {
		http.DefaultTransport, http.DefaultClient.Transport = transport, client
		_ = os.Setenv("PATH", path)
	})
	offline()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://127.0.0.1:1/x", nil)
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	assert.ErrorIs(t, err, render.ErrRemoteRefused)
	_, err = exec.LookPath("git")
	assert.True(t, errors.Is(err, exec.ErrNotFound), "%v", err)
}

func skipOffLinux(t testing.TB) {
	if runtime.GOOS != "linux" {
		t.Skip("the worker's process limits are Linux's")
	}
}

// TestGitBaseWithoutGitFailsItsBuild: the controller's image has no git,
// so with remote bases on a git base fails its build, saying so, while
// HTTP(S) files still load (a worker finds git only on the controller's
// PATH).
func TestGitBaseWithoutGitFailsItsBuild(t *testing.T) {
	skipOffLinux(t)
	t.Setenv("PATH", "")
	root := tree(t, map[string]string{"app/kustomization.yaml": "resources:\n- https://github.com/example/config//base?ref=main\n"})
	_, err := (&Pool{}).Build(t.Context(), root, "app", render.Options{AllowRemoteBases: true})
	require.Error(t, err)
	var died *DiedError
	assert.False(t, errors.As(err, &died), "the build fails, the worker does not die: %v", err)
	assert.ErrorIs(t, err, render.ErrNoGit)
	assert.Contains(t, err.Error(), "no 'git' program on path")
}
