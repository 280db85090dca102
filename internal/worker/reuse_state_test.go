/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

// Attacks on the reuse of a worker by its tenant (e639fe2). Each test
// states what should hold; those that fail show where it does not.

// idleOf is the idle worker of tenant, nil when there is none.
func idleOf(p *Pool, tenant string) *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.idle[tenant]; e != nil {
		return e.pr
	}
	return nil
}

// TestAnswerLeavesNoProcessOfTheBuildRunning: kustomize gives up on a
// remote base's git after the base's ?timeout= (a kustomization may set
// 1 s) and leaves that git running. A worker whose build left a process
// running is not kept for its tenant's next build: it is ended with its
// process group, so nothing of a build runs once it answered (outside any
// slot, holding the worker's open files).
func TestAnswerLeavesNoProcessOfTheBuildRunning(t *testing.T) {
	skipOffLinux(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	addr, _ := silentServer(t)
	root := tree(t, map[string]string{"app/kustomization.yaml": "resources:\n- git::http://" + addr + "/repo.git?timeout=1s\n"})
	p := &Pool{}
	t.Cleanup(p.Close)
	o := render.Options{Tenant: "team-a", AllowRemoteBases: true, Limits: render.Limits{Timeout: 20 * time.Second}}
	_, err := p.Build(t.Context(), "testdata", "fine", o)
	require.NoError(t, err)
	worker := idleOf(p, "team-a")
	require.NotNil(t, worker, "the tenant's worker waits for its next build")
	_, err = p.Build(t.Context(), root, "app", o)
	require.Error(t, err)
	require.Contains(t, err.Error(), "hit 1s timeout", "kustomize gave up on its git: %v", err)
	var died *DiedError
	require.False(t, errors.As(err, &died), "the build failed, its worker answered: %v", err)
	assert.Nil(t, idleOf(p, "team-a"), "a worker whose build left a process running is not kept")
	assert.Eventually(t, func() bool { return !worker.alive() && len(groupOthers(worker.cmd.Process.Pid)) == 0 },
		5*time.Second, 50*time.Millisecond, "the build answered, yet what it started runs on: %v", groupOthers(worker.cmd.Process.Pid))
	assert.EqualValues(t, 1, p.started.Load(), "the build ran in the tenant's worker")
}

// cpuTree is a kustomization of n ConfigMaps under a prefix and a label:
// kustomize's CPU time grows with n faster than linearly (2000 take some
// 2.5 s here, 1 takes nothing).
func cpuTree(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n  a: \"%d\"\n", i, i)
	}
	return tree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- cms.yaml\nnamePrefix: p-\nlabels:\n- pairs: {a: b}\n",
		"app/cms.yaml":           b.String(),
	})
}

// TestEveryRequestOfAReusedWorkerHasItsWholeCPUTime: a worker's CPU time
// is bounded per request, not over its life: a tenant's worker that has
// already used more than --render-max-cpu on earlier builds still gives
// the next one all of it, so that whether a revision is recorded as dead
// does not depend on what the process built before. A build past it ends
// at the CPU limit, named.
func TestEveryRequestOfAReusedWorkerHasItsWholeCPUTime(t *testing.T) {
	skipOffLinux(t)
	const maxCPU = 2 * time.Second
	limits := render.Limits{Timeout: 3 * time.Minute, MaxFileReads: -1, MaxBytes: -1, MaxObjects: -1}
	p := &Pool{MaxCPU: maxCPU}
	t.Cleanup(p.Close)
	o := render.Options{Tenant: "team-a", Limits: limits}
	light := cpuTree(t, 600)
	for i := 0; ; i++ {
		require.Less(t, i, 100, "calibration: the builds take no CPU")
		_, err := p.Build(t.Context(), light, "app", o)
		require.NoError(t, err)
		idle := idleOf(p, "team-a")
		require.NotNil(t, idle, "the worker is kept")
		if self, _ := cpuOf(t, idle.cmd.Process.Pid); self > maxCPU+time.Second {
			t.Logf("the tenant's worker has used %v of CPU in %d builds", self, i+1)
			break
		}
	}
	_, err := p.Build(t.Context(), light, "app", o)
	require.NoError(t, err, "past --render-max-cpu over its life, the worker still builds")
	assert.EqualValues(t, 1, p.started.Load(), "in the same worker")

	_, err = p.Build(t.Context(), "testdata/hostile", "memory-bomb", render.Options{Tenant: "team-a", Limits: unbounded})
	var le *render.LimitError
	require.ErrorAs(t, err, &le, "%v", err)
	assert.Contains(t, []string{render.LimitCPU, render.LimitMemory, render.LimitTime}, le.Limit, "%v", err)
}

// cpuOf is the CPU time of process pid itself and of the children it
// waited for, from /proc.
func cpuOf(t *testing.T, pid int) (self, children time.Duration) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	tick := func(i int) time.Duration {
		n, err := strconv.ParseInt(f[i], 10, 64)
		require.NoError(t, err)
		return time.Duration(n) * 10 * time.Millisecond // USER_HZ is 100
	}
	// Fields 14 to 17 of proc(5), counted from the state (field 3).
	return tick(11) + tick(12), tick(13) + tick(14)
}

// TestAKillFromOutsideOfAReusedWorkerIsNotItsCPULimit: a dead worker's
// rusage counts the gits it waited for, which add up over a reused
// worker's life; a SIGKILL from outside (the OOM killer) is still told
// apart from the CPU limit, which only the worker's own time for its
// request reaches: ErrKilled, retried, not a death recorded against the
// revision.
func TestAKillFromOutsideOfAReusedWorkerIsNotItsCPULimit(t *testing.T) {
	skipOffLinux(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	gittest.Isolate(t)
	repos := t.TempDir()
	bare := filepath.Join(repos, "base.git")
	gittest.Git(t, repos, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	blob := make([]byte, 512<<10)
	rand.New(rand.NewSource(1)).Read(blob)
	files := []gittest.File{{Path: "blob.bin", Size: int64(len(blob)), Content: strings.NewReader(string(blob))}}
	var bases strings.Builder
	for i := range 2 {
		files = append(files,
			gittest.Text(fmt.Sprintf("d%d/kustomization.yaml", i), "resources: [cm.yaml]\n"),
			gittest.Text(fmt.Sprintf("d%d/cm.yaml", i), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d}\n", i)))
		fmt.Fprintf(&bases, "- file://%s//d%d?ref=main\n", bare, i)
	}
	gittest.ImportCommit(t, bare, "main", files...)
	withBases := tree(t, map[string]string{"app/kustomization.yaml": "resources:\n" + bases.String()})

	p := &Pool{MaxCPU: time.Second}
	t.Cleanup(p.Close)
	o := render.Options{Tenant: "team-a", AllowRemoteBases: true, AllowFileURLs: true, Limits: render.Limits{Timeout: time.Minute}}
	var idle *proc
	for i := 0; ; i++ {
		require.Less(t, i, 15, "calibration: its gits take no CPU")
		objs, err := p.Build(t.Context(), withBases, "app", o)
		require.NoError(t, err)
		require.Len(t, objs, 2)
		idle = idleOf(p, "team-a")
		require.NotNil(t, idle, "calibration: the worker was retired")
		self, children := cpuOf(t, idle.cmd.Process.Pid)
		t.Logf("build %d: the worker used %v itself, its gits %v", i+1, self, children)
		if children > 1500*time.Millisecond {
			break
		}
	}

	// The next build of the tenant hangs on a remote base, in that
	// worker; the OOM killer ends it.
	root, accepted := hangingTreeTold(t)
	done := make(chan error, 1)
	go func() {
		_, err := p.Build(t.Context(), root, "app", o)
		done <- err
	}()
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("the build did not reach its remote base")
	}
	require.True(t, idle.alive())
	require.NoError(t, syscall.Kill(idle.cmd.Process.Pid, syscall.SIGKILL))
	err := <-done
	var died *DiedError
	assert.False(t, errors.As(err, &died), "a kill from outside recorded against the revision: %v", err)
	assert.ErrorIs(t, err, ErrKilled, "%v", err)
}

// bigAnswerTree renders mib ConfigMaps of 1 MiB each: an answer of some
// mib MiB, well within MaxAnswer (128 MiB).
func bigAnswerTree(t *testing.T, mib int) string {
	t.Helper()
	files := map[string]string{}
	var res strings.Builder
	value := strings.Repeat("x", 1<<20)
	for i := range mib {
		files[fmt.Sprintf("app/cm%d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n  a: %s\n", i, value)
		fmt.Fprintf(&res, "- cm%d.yaml\n", i)
	}
	files["app/kustomization.yaml"] = "resources:\n" + res.String()
	return tree(t, files)
}

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestAnIdleWorkerHoldsNoAnswerInTheController: the controller reads
// each answer with a decoder of its own, so that an idle worker does not
// hold the buffer its largest answer grew (up to MaxAnswer) in the
// controller's heap.
func TestAnIdleWorkerHoldsNoAnswerInTheController(t *testing.T) {
	skipOffLinux(t)
	root := bigAnswerTree(t, 24)
	p := &Pool{}
	t.Cleanup(p.Close)
	before := heapAlloc()
	objs, err := p.Build(t.Context(), root, "app", render.Options{Tenant: "team-a", Limits: unbounded})
	require.NoError(t, err)
	require.Len(t, objs, 24)
	objs = nil
	require.NotNil(t, idleOf(p, "team-a"))
	held := heapAlloc() - before
	t.Logf("the controller's heap with the worker idle: %d MiB more than before its build", held>>20)
	assert.Less(t, held, int64(4<<20), "what the controller keeps of an idle worker's answer")
}

// rssAnon is the anonymous resident memory of process pid.
func rssAnon(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssAnon:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kib << 10
		}
	}
	t.Fatal("no RssAnon")
	return 0
}

// TestAnIdleWorkerGivesBackTheMemoryOfItsAnswer: a worker gives back
// what its answer took before it waits, the encoder's buffer too (which
// one collection only moves to a sync.Pool's victim cache): an idle
// worker is as small after a 40 MiB answer as after a small one, as
// docs/operations/limits.md sizes it.
func TestAnIdleWorkerGivesBackTheMemoryOfItsAnswer(t *testing.T) {
	skipOffLinux(t)
	root := bigAnswerTree(t, 40)
	p := &Pool{}
	t.Cleanup(p.Close)
	_, err := p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-b"})
	require.NoError(t, err)
	_, err = p.Build(t.Context(), root, "app", render.Options{Tenant: "team-a", Limits: unbounded})
	require.NoError(t, err)
	time.Sleep(2 * time.Second) // its FreeOSMemory after the answer
	small, big := idleOf(p, "team-b"), idleOf(p, "team-a")
	require.NotNil(t, small)
	require.NotNil(t, big)
	s, b := rssAnon(t, small.cmd.Process.Pid), rssAnon(t, big.cmd.Process.Pid)
	t.Logf("idle after a small answer: %d MiB anonymous; after a 40 MiB answer: %d MiB", s>>20, b>>20)
	assert.Less(t, b, s+8<<20, "an idle worker holds what its last answer took")
}

// TestCloseEndsTheIdleWorkersBeforeItReturns: when Close returns (the
// manager's shutdown), the idle workers have ended and their directories
// are gone.
func TestCloseEndsTheIdleWorkersBeforeItReturns(t *testing.T) {
	skipOffLinux(t)
	p := &Pool{}
	_, err := p.Build(t.Context(), "testdata", "fine", render.Options{Tenant: "team-a"})
	require.NoError(t, err)
	idle := idleOf(p, "team-a")
	require.NotNil(t, idle)
	p.Close()
	alive := idle.alive()
	_, statErr := os.Stat(idle.tmp)
	assert.False(t, alive, "the idle worker still runs when Close returned")
	assert.True(t, os.IsNotExist(statErr), "its directory %s is still there when Close returned", idle.tmp)
}

// TestKillOfAReapedWorkerSignalsNoOtherGroup: a worker's process group id
// is its pid, free for another group once the worker was reaped and no
// member is left. Ending a worker that was reaped already (it exited on
// its own, or died while idle) signals nothing: here a sleep stands in
// for a process that took the id since.
func TestKillOfAReapedWorkerSignalsNoOtherGroup(t *testing.T) {
	skipOffLinux(t)
	other := exec.Command("sleep", "30")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })

	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	// A worker reaped already (exited is closed), whose pid the sleep's
	// group has taken since.
	pr := &proc{cmd: &exec.Cmd{Process: other.Process}, stdin: nopCloser{io.Discard}, answer: &bounded{r: r},
		tmp: t.TempDir(), exited: make(chan struct{}), reaped: true}
	close(pr.exited)
	pr.kill()

	time.Sleep(100 * time.Millisecond)
	var ws syscall.WaitStatus
	pid, _ := syscall.Wait4(other.Process.Pid, &ws, syscall.WNOHANG, nil)
	assert.Zero(t, pid, "the process that reused the reaped worker's group id was killed (%v)", ws)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestAWorkerWhoseGroupOutlivesARemoteBuildIsNotKept: a process left in a
// worker's process group that is not its child (a git's helper whose git
// ended, reparented) after a build with remote bases would run online
// during the tenant's next build, which may be offline: the worker is not
// kept, and its group is ended with it.
func TestAWorkerWhoseGroupOutlivesARemoteBuildIsNotKept(t *testing.T) {
	skipOffLinux(t)
	p := &Pool{}
	t.Cleanup(p.Close)
	o := render.Options{Tenant: "team-a", AllowRemoteBases: true}
	_, err := p.Build(t.Context(), "testdata", "fine", o)
	require.NoError(t, err)
	worker := idleOf(p, "team-a")
	require.NotNil(t, worker, "calibration: a remote build's worker with nothing left is kept")
	pid := worker.cmd.Process.Pid

	left := exec.Command("sleep", "60")
	left.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pid}
	require.NoError(t, left.Start())
	t.Cleanup(func() { _ = left.Process.Kill(); _ = left.Wait() })
	assert.False(t, hasChildren(pid), "not the worker's child")

	p.mu.Lock()
	p.evict("team-a", p.idle["team-a"])
	p.mu.Unlock()
	p.park(t.Context(), "team-a", worker, true)
	assert.Nil(t, idleOf(p, "team-a"), "not kept")
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("what was left in the worker's group runs on")
	}
}
