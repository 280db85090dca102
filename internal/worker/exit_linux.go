/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// exit_linux.go: the worker's process group and why a worker ended without
// an answer — the limit it hit with its measured peak, or the Go runtime's
// words.

package worker

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"bggitops.dev/bg-gitops/internal/render"
)

// isolate puts the worker in its own process group: a git it runs is
// killed with it.
// It is killed, too, when the controller dies (a leader that exits
// without waiting for its workers).
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the worker's process group (and a git that kustomize
// gave up on); callers hold the process unreaped (proc.signal, proc.wait),
// so that its id is no other group's.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// waitExited returns once the process has ended, leaving it unreaped: a
// zombie keeps its process group's id from being reused.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// hasChildren reports whether process pid has children: a git that a
// build left running, which would outlive the request in a worker kept for
// the next one.
func hasChildren(pid int) bool {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range files {
		if b, err := os.ReadFile(f); err != nil || len(strings.TrimSpace(string(b))) > 0 {
			return true
		}
	}
	return len(files) == 0 // cannot tell: not kept
}

// groupHasOthers reports whether process group pgid holds a process other
// than its leader: what a worker's git started may outlive that git, no
// longer the worker's child but still of its group. It reads every
// process's stat, so the pool asks only after a build with remote bases.
func groupHasOthers(pgid int) bool { return len(groupOthers(pgid)) > 0 }

// groupOthers are the processes of process group pgid other than its
// leader, by their stat's name and state; zombies are not counted.
func groupOthers(pgid int) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return []string{"/proc: " + err.Error()} // cannot tell: not kept
	}
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[end+1:]) // state, ppid, pgrp, ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, s[:end+1]+" "+f[0])
		}
	}
	return out
}

// ownPeak is this process's peak resident memory (VmHWM), in bytes: a
// child started with vfork carries it into its own rusage, so a worker's
// measured peak means something only above it.
func ownPeak() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kib << 10
		}
	}
	return 0
}

// exitOf says why a worker ended without an answer: the limit it hit, with
// its measured peak (0 when it cannot be told from this process's own,
// base), or the Go runtime's own words; nil when it exited 0.
func exitOf(cmd *exec.Cmd, runErr error, stderr string, req request, base int64) error {
	st := cmd.ProcessState
	if st == nil {
		return fmt.Errorf("%w: it did not start: %w", ErrWorker, runErr)
	}
	if st.Success() {
		return nil
	}
	var peak int64
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		if peak = ru.Maxrss << 10; peak <= base { // KiB on Linux
			peak = 0
		}
	}
	if err := limitOf(st, stderr, req, peak); err != nil {
		return &DiedError{Err: err}
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		// Not by us (the deadline is told apart before), nor by its CPU
		// limit, and its own memory limit ends it with the runtime's
		// words: the kernel's OOM killer, when the container ran out
		// of memory, whoever used it. Not this input's doing.
		return ErrKilled
	case !ws.Signaled() && st.ExitCode() == exitProtocol:
		return fmt.Errorf("%w: %s", ErrWorker, firstFatal(stderr))
	}
	return &DiedError{Err: fmt.Errorf("the worker process died (%s): %s", st, firstFatal(stderr))}
}

// runtimeFatal is the line the Go runtime says why it died with, "" when
// there is none.
func runtimeFatal(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return ""
}

// limitOf is the limit a worker that died hit, nil when none.
func limitOf(st *os.ProcessState, stderr string, req request, peak int64) error {
	switch {
	case strings.Contains(stderr, "stack overflow") || strings.Contains(stderr, "goroutine stack exceeds"):
		return &render.LimitError{Limit: render.LimitStack, Max: req.MaxStack, Peak: peak}
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		strings.Contains(stderr, "pthread_create failed") || req.MaxMemory > 0 && runtimeNilFault(stderr):
		return &render.LimitError{Limit: render.LimitMemory, Max: req.MaxMemory, Peak: peak}
	case !st.Sys().(syscall.WaitStatus).Signaled() && st.ExitCode() == exitCPU:
		// Its own CPU time during this request (see cpuLimit), not
		// that of the gits it ran.
		return &render.LimitError{Limit: render.LimitCPU, Max: int64(time.Duration(req.MaxCPU) * time.Second), Peak: peak}
	}
	return nil
}

// runtimeNilFault says the Go runtime itself dereferenced nil: the worker
// is pure Go, so that is an allocation of the runtime's own that failed
// under RLIMIT_DATA without its "out of memory" words (seen in the
// garbage collector's span queues of Go 1.26).
func runtimeNilFault(stderr string) bool {
	head, rest, _ := strings.Cut(stderr, "\n")
	if !strings.HasPrefix(head, "SIGSEGV") || !strings.Contains(rest, "addr=0x0") {
		return false
	}
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, "goroutine ") || strings.HasPrefix(l, "PC=") || l == "" {
			continue
		}
		return strings.HasPrefix(l, "runtime.") // the faulting frame
	}
	return false
}

// firstFatal is the line the Go runtime says why it died with, else the
// first line.
func firstFatal(stderr string) string {
	if l := runtimeFatal(stderr); l != "" {
		return l
	}
	l, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	return l
}
