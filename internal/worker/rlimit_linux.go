/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"fmt"

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
