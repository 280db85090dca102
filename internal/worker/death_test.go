/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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
// hangs a build until its deadline. Each connection accepted is told on
// the channel.
func silentServer(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	return l.Addr().String(), accepted
}

func hangingTree(t *testing.T) string {
	root, _ := hangingTreeTold(t)
	return root
}

// hangingTreeTold is hangingTree and the channel its server tells each
// connection on.
func hangingTreeTold(t *testing.T) (string, <-chan struct{}) {
	addr, accepted := silentServer(t)
	return tree(t, map[string]string{"app/kustomization.yaml": "resources:\n- http://" + addr + "/cm.yaml\n"}), accepted
}

// TestBuildHasItsWholeTimeAfterWaitingForItsSlot: a build that waited
// for its tenant's place has its whole time limit from when it got it, so
// that a kill at the deadline is the build's own doing.
func TestBuildHasItsWholeTimeAfterWaitingForItsSlot(t *testing.T) {
	p := &Pool{Slots: 2}
	release, err := p.acquire(t.Context(), "team-a")
	require.NoError(t, err)
	time.AfterFunc(2500*time.Millisecond, release)
	objs, err := p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-a", Limits: render.Limits{Timeout: 3 * time.Second}})
	require.NoError(t, err, "2.5 s waiting, then 3 s of its own")
	assert.Len(t, objs, 1)
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
// *DiedError, which would be recorded against the revision; the same
// build killed so a third time in a row is taken as its own death.
func TestWorkerKilledFromOutsideIsRetriedNotRecorded(t *testing.T) {
	skipOffLinux(t)
	p := &Pool{}
	o := render.Options{Tenant: "team-a", Revision: "main@sha1:1", AllowRemoteBases: true, Limits: render.Limits{Timeout: time.Minute}}
	root, accepted := hangingTreeTold(t)
	killed := func() error {
		done := make(chan error, 1)
		go func() {
			_, err := p.Build(t.Context(), root, "app", o)
			done <- err
		}()
		select {
		case <-accepted: // the worker runs the build
		case <-time.After(30 * time.Second):
			t.Fatal("the build did not reach its remote base")
		}
		pid := childPID()
		require.Positive(t, pid)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		return <-done
	}
	for range maxKills - 1 {
		err := killed()
		require.ErrorIs(t, err, ErrKilled, "%v", err)
		require.ErrorIs(t, err, ErrWorker)
		var died *DiedError
		assert.False(t, errors.As(err, &died), "%v", err)
	}
	err := killed()
	var died *DiedError
	require.ErrorAs(t, err, &died, "killed %d times in a row: %v", maxKills, err)
	assert.Contains(t, err.Error(), "from outside")
}

// TestWorkerProtocolFailureIsRetriedNotRecorded: a worker that fails at
// its own protocol (here, a request it cannot read) exits with a code of
// its own, which the pool retries rather than record against the input.
func TestWorkerProtocolFailureIsRetriedNotRecorded(t *testing.T) {
	skipOffLinux(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, Arg)
	cmd.Stdin = strings.NewReader("not json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	require.Error(t, runErr)
	assert.Equal(t, exitProtocol, cmd.ProcessState.ExitCode())
	err = exitOf(cmd, runErr, stderr.String(), request{}, 0)
	require.ErrorIs(t, err, ErrWorker, "%v", err)
	var died *DiedError
	assert.False(t, errors.As(err, &died), "%v", err)
}

// TestDeprecationWarningsDoNotHideAStackOverflow: kustomize writes a
// warning to stderr for every deprecated field of every kustomization it
// loads; however many a repository makes, the worker's death is still
// told by the Go runtime's own words, and named.
func TestDeprecationWarningsDoNotHideAStackOverflow(t *testing.T) {
	skipOffLinux(t)
	cycle, err := os.ReadFile("testdata/hostile/alias-cycle-in-inline-patch/kustomization.yaml")
	require.NoError(t, err)
	files := map[string]string{"app/cm.yaml": configMap}
	var bases strings.Builder
	for i := range 300 {
		dir := fmt.Sprintf("app/noisy%d", i)
		files[dir+"/kustomization.yaml"] = "commonLabels: {noisy: \"yes\"}\nnamePrefix: n" + strconv.Itoa(i) + "-\nresources:\n- ../cm.yaml\n"
		fmt.Fprintf(&bases, "- noisy%d\n", i)
	}
	files["app/kustomization.yaml"] = strings.Replace(string(cycle), "- cm.yaml\n", "- cm.yaml\n"+bases.String(), 1)
	p := &Pool{MaxMemory: 256 << 20, MaxCPU: 10 * time.Second}
	_, err = p.Build(t.Context(), tree(t, files), "app", render.Options{Limits: unbounded})
	var le *render.LimitError
	require.ErrorAs(t, err, &le, "%v", err)
	assert.Contains(t, []string{render.LimitStack, render.LimitMemory}, le.Limit, "%v", err)
	t.Log(err)
}

// childPID is the child process of this one started last, 0 when there
// is none (idle workers of other tests' pools may still run).
func childPID() int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	pid, newest := 0, int64(-1)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			stat, err := os.ReadFile("/proc/" + c + "/stat")
			if err != nil {
				continue
			}
			// Field 22, starttime, counted after the command's ")".
			fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if len(fields) < 20 {
				continue
			}
			start, _ := strconv.ParseInt(fields[19], 10, 64)
			if n, err := strconv.Atoi(c); err == nil && start > newest {
				pid, newest = n, start
			}
		}
	}
	return pid
}

// TestWorkerOutputIsCappedAsItIsCopied: what a worker writes is kept up
// to its cap however it is copied (exec.Cmd copies with io.Copy, which
// prefers a writer's ReadFrom).
func TestWorkerOutputIsCappedAsItIsCopied(t *testing.T) {
	c := &capped{max: 10}
	n, err := io.Copy(c, strings.NewReader(strings.Repeat("x", 100)))
	require.NoError(t, err)
	assert.EqualValues(t, 100, n)
	assert.Equal(t, strings.Repeat("x", 10), c.String())
	assert.True(t, c.over)
}
