/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
)

// silentServer accepts connections and never answers: a remote base that
// hangs a build until its deadline.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	return l.Addr().String()
}

func hangingTree(t *testing.T) string {
	return tree(t, map[string]string{"app/kustomization.yaml": "resources:\n- http://" + silentServer(t) + "/cm.yaml\n"})
}

// TestBuildThatGotItsSlotLateIsRetried: a build that waited for its
// tenant's place for much of its time limit and is killed at it is
// Waiting (retried), not a death of the revision's own.
func TestBuildThatGotItsSlotLateIsRetried(t *testing.T) {
	p := &Pool{Slots: 2}
	release, err := p.acquire(t.Context(), "team-a")
	require.NoError(t, err)
	time.AfterFunc(time.Second, release)
	o := render.Options{Tenant: "team-a", AllowRemoteBases: true, Limits: render.Limits{Timeout: 3 * time.Second}}
	_, err = p.Build(t.Context(), hangingTree(t), "app", o)
	var le *render.LimitError
	require.ErrorAs(t, err, &le, "%v", err)
	assert.Equal(t, render.LimitTime, le.Limit)
	assert.True(t, le.Waiting, "a third of its time went waiting: %v", err)
	var died *DiedError
	assert.False(t, errors.As(err, &died), "not recorded as the revision's: %v", err)
}

// TestFetchThatFindsNoWorkerInTimeIsRetried: a fetch that waits for its
// tenant's place past its timeout fails as a timeout, to be retried, and
// is not a worker's death.
func TestFetchThatFindsNoWorkerInTimeIsRetried(t *testing.T) {
	skipOffLinux(t)
	_, o, secret := gitServer(t)
	p := &Pool{Slots: 2}
	release, err := p.acquire(t.Context(), "team-a")
	require.NoError(t, err)
	defer release()
	o.Timeout = time.Second
	_, err = p.Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
	var se *source.Error
	require.ErrorAs(t, err, &se, "%v", err)
	assert.Equal(t, source.ReasonTimeout, se.Reason)
	var died *DiedError
	assert.False(t, errors.As(err, &died), "%v", err)
}

// TestWorkerKilledFromOutsideIsRetriedNotRecorded: a worker that the
// kernel's OOM killer (or anyone but the pool) kills with SIGKILL did not
// die of its own input: the error is ErrWorker, which is retried, not a
// *DiedError, which would be recorded against the revision.
func TestWorkerKilledFromOutsideIsRetriedNotRecorded(t *testing.T) {
	skipOffLinux(t)
	done := make(chan error, 1)
	o := render.Options{AllowRemoteBases: true, Limits: render.Limits{Timeout: time.Minute}}
	root := hangingTree(t)
	go func() {
		_, err := (&Pool{}).Build(t.Context(), root, "app", o)
		done <- err
	}()
	var pid int
	require.Eventually(t, func() bool { pid = childPID(); return pid > 0 }, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	err := <-done
	require.ErrorIs(t, err, ErrWorker, "%v", err)
	var died *DiedError
	assert.False(t, errors.As(err, &died), "%v", err)
	assert.Contains(t, err.Error(), "from outside")
}

// TestNonWorkerExitIsRetriedNotRecorded: a program that exits without the
// Go runtime's last words (not a worker: another version's binary, a
// broken protocol) fails the request with ErrWorker, not as the
// revision's death.
func TestNonWorkerExitIsRetriedNotRecorded(t *testing.T) {
	skipOffLinux(t)
	bin := filepath.Join(t.TempDir(), "not-a-worker")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho 'unknown command' >&2\nexit 1\n"), 0o755))
	_, err := (&Pool{Binary: bin}).Build(t.Context(), "testdata", "fine", render.Options{})
	require.ErrorIs(t, err, ErrWorker, "%v", err)
	var died *DiedError
	assert.False(t, errors.As(err, &died), "%v", err)
}

// childPID is a child process of this one, 0 when there is none.
func childPID() int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(c); err == nil {
				return pid
			}
		}
	}
	return 0
}
