/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// rlimit_linux.go: the worker's own OS limits — open files, file size, CPU
// time per request — and measuring its peak memory.

package worker

import (
	"fmt"
	"os"
	"os/signal"
	"time"

	"golang.org/x/sys/unix"
)

// openFiles bounds the files a worker may hold open.
const openFiles = 256

// rlimit sets the limits of this process's life; its CPU time is bounded
// per request (cpuLimit).
func rlimit(req request) error {
	set := func(name string, res int, soft, hard uint64) error {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: soft, Max: hard}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if req.MaxMemory > 0 {
		if err := set("RLIMIT_DATA", unix.RLIMIT_DATA, uint64(req.MaxMemory), uint64(req.MaxMemory)); err != nil {
			return err
		}
	}
	return set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, openFiles, openFiles)
}

// fileSizeLimit bounds the files the request writes (none when max is
// negative): only ever lowered, as a fetch worker that serves a build
// does.
func fileSizeLimit(limit int64) error {
	size := fileSizeOf(limit)
	if size < 0 {
		return nil
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(size), Max: uint64(size)}); err != nil {
		return fmt.Errorf("RLIMIT_FSIZE: %w", err)
	}
	return nil
}

// resetPeak starts the measure of this process's peak memory (VmHWM, and
// the rusage its parent reads when it dies) afresh, for the request it
// serves next.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// cpuLimit gives the request this process serves next max seconds of
// CPU time of its own (RLIMIT_CPU counts the whole life of the process,
// not the gits it runs); max 0 lifts the limit while it waits. Past the
// soft limit the kernel sends SIGXCPU every second, and catchCPU ends the
// worker; the hard limit is left as it was, so that the soft one can be
// raised again for the next request.
func cpuLimit(max int64) error {
	var cur unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_CPU, &cur); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	soft := cur.Max
	if max > 0 {
		used := uint64((cpuUsed() + time.Second - 1) / time.Second)
		soft = min(used+uint64(max), cur.Max)
	}
	if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: soft, Max: cur.Max}); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	return nil
}

// catchCPU ends the worker with exitCPU, telling why on stderr, when the
// kernel says it passed its CPU time: the Go runtime ignores SIGXCPU
// unless asked for it.
func catchCPU(stderr *os.File) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, unix.SIGXCPU)
	go func() {
		<-c
		fmt.Fprintln(stderr, "render worker: its CPU time limit for the request is used")
		os.Exit(exitCPU)
	}()
}

// cpuUsed is the CPU time this process has used.
func cpuUsed() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
