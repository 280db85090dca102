/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// openFiles bounds the files a worker may hold open.
const openFiles = 256

// rlimit sets the hard limits of this process. The CPU limit's soft
// value sends SIGXCPU, its hard value one second later SIGKILL.
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
	if req.MaxCPU > 0 {
		if err := set("RLIMIT_CPU", unix.RLIMIT_CPU, uint64(req.MaxCPU), uint64(req.MaxCPU)+1); err != nil {
			return err
		}
	}
	if err := set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, openFiles, openFiles); err != nil {
		return err
	}
	if req.MaxFileSize < 0 {
		return nil
	}
	size := uint64(max(req.MaxFileSize, fileSize))
	return set("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, size, size)
}

// resetPeak starts the measure of this process's peak memory (VmHWM, and
// the rusage its parent reads when it dies) afresh, for the request it
// serves next.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// cpuUsed is the CPU time this process has used.
func cpuUsed() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
