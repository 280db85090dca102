//go:build linux && !nodev

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops dev` stops what it started however it is ended: SIGTERM,
// SIGHUP, or the reader of its output gone (`make demo | tee`, Ctrl-C).

package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

var workingDirectory = regexp.MustCompile(`working directory (\S+)`)

func TestDevStopsEverythingHoweverItIsEnded(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	ends := map[string]func(d *piped){
		"SIGTERM":       func(d *piped) { require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM)) },
		"SIGHUP":        func(d *piped) { require.NoError(t, d.cmd.Process.Signal(syscall.SIGHUP)) },
		"stdout closed": func(d *piped) { require.NoError(t, d.stdout.Close()) },
	}
	for _, name := range []string{"SIGHUP", "stdout closed", "SIGTERM"} {
		t.Run(name, func(t *testing.T) {
			d := startPiped(t, "dev")
			dir := d.waitFor(t, workingDirectory)
			d.waitFor(t, regexp.MustCompile(`── look around`))
			children := childProcesses(t, d.cmd.Process.Pid)
			require.Contains(t, children, "etcd")
			require.Contains(t, children, "kube-apiserver")
			t.Cleanup(func() { killLeftovers(children, dir) })

			ends[name](d)
			exited := make(chan struct{})
			go func() { _ = d.cmd.Wait(); close(exited) }()
			select {
			case <-exited:
			case <-time.After(90 * time.Second):
				_ = d.cmd.Process.Kill()
				t.Fatalf("bg-gitops dev still running 90s after %s", name)
			}
			for comm, pid := range children {
				assert.False(t, alive(pid), "%s (PID %d) stopped", comm, pid)
			}
			_, err := os.Stat(dir)
			assert.True(t, os.IsNotExist(err), "%s removed: %v", dir, err)
		})
	}
}

// TestDevChildrenDieWhenItIsKilled: SIGKILL leaves `bg-gitops dev` no
// cleanup, yet etcd, kube-apiserver and Gitea die with it (the kernel's
// parent-death signal), rather than run on with nobody to stop them. Its
// temporary directory stays: nothing is left to remove it.
func TestDevChildrenDieWhenItIsKilled(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	d := startPiped(t, "dev")
	dir := d.waitFor(t, workingDirectory)
	d.waitFor(t, regexp.MustCompile(`── look around`))
	children := childProcesses(t, d.cmd.Process.Pid)
	for _, name := range []string{"etcd", "kube-apiserver", "gitea"} {
		require.Contains(t, children, name)
	}
	t.Cleanup(func() { killLeftovers(children, dir) })

	require.NoError(t, d.cmd.Process.Kill())
	_ = d.cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for anyAlive(children) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	for comm, pid := range children {
		assert.False(t, alive(pid), "%s (PID %d) died with bg-gitops dev", comm, pid)
	}
}

func anyAlive(pids map[string]int) bool {
	for _, pid := range pids {
		if alive(pid) {
			return true
		}
	}
	return false
}

// piped is `bg-gitops dev` with its output on a pipe the test reads.
type piped struct {
	cmd    *exec.Cmd
	stdout *os.File // the reading end
	mu     sync.Mutex
	out    strings.Builder
}

func startPiped(t *testing.T, args ...string) *piped {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	d := &piped{cmd: exec.Command(exe, args...), stdout: r}
	d.cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	d.cmd.Stdout = w
	d.cmd.Stderr, err = os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	stopWithParent(d.cmd)
	require.NoError(t, d.cmd.Start())
	w.Close()
	go d.read()
	t.Cleanup(func() {
		_ = d.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("stdout:\n%s", d.output())
		}
	})
	return d
}

// read copies the output until the pipe is closed at either end.
func (d *piped) read() {
	s := bufio.NewScanner(d.stdout)
	for s.Scan() {
		d.mu.Lock()
		d.out.WriteString(s.Text() + "\n")
		d.mu.Unlock()
	}
}

func (d *piped) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// waitFor waits up to 4 minutes for re in the output and returns its first
// group (or the match).
func (d *piped) waitFor(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(d.output()); m != nil {
			return m[len(m)-1]
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %q in the output after 4 minutes", re)
	return ""
}

// childProcesses maps the command name of each child of pid to its PID.
func childProcesses(t *testing.T, pid int) map[string]int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	out := map[string]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		comm, rest, _ := strings.Cut(string(b[strings.IndexByte(string(b), '(')+1:]), ") ")
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out[comm] = child
		}
	}
	return out
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// killLeftovers kills what a failed stop left behind, so that one failure
// does not leave a control plane running on the machine.
func killLeftovers(children map[string]int, dir string) {
	for _, pid := range children {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_ = os.RemoveAll(dir)
}
