/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"bggitops.dev/bg-gitops/internal/render"
)

// isolate puts the worker in its own process group: a git it runs is
// killed with it.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// exitOf says why a worker ended without an answer: the limit it hit, with
// its measured peak, or the Go runtime's own words; nil when it exited 0.
func exitOf(cmd *exec.Cmd, runErr error, stderr string, req request) error {
	st := cmd.ProcessState
	if st == nil {
		return fmt.Errorf("the render worker did not start: %w", runErr)
	}
	if st.Success() {
		return nil
	}
	var peak int64
	var cpu time.Duration
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10 // KiB on Linux
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case strings.Contains(stderr, "stack overflow") || strings.Contains(stderr, "goroutine stack exceeds"):
		return &render.LimitError{Limit: render.LimitStack, Max: req.MaxStack, Peak: peak}
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		strings.Contains(stderr, "pthread_create failed"):
		return &render.LimitError{Limit: render.LimitMemory, Max: req.MaxMemory, Peak: peak}
	case ws.Signaled() && ws.Signal() == syscall.SIGXCPU,
		ws.Signaled() && req.MaxCPU > 0 && cpu >= time.Duration(req.MaxCPU)*time.Second:
		return &render.LimitError{Limit: render.LimitCPU, Max: int64(time.Duration(req.MaxCPU) * time.Second), Peak: peak}
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		// Not by us, nor by its CPU limit: the kernel's OOM killer.
		return &render.LimitError{Limit: render.LimitMemory, Max: req.MaxMemory, Peak: peak}
	}
	return fmt.Errorf("the render worker died (%s, peak resident %d MiB): %s", st, peak>>20, firstFatal(stderr))
}

// firstFatal is the line the Go runtime says why it died with, else the
// first line.
func firstFatal(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return lines[0]
}
