//go:build !linux

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// rlimit_other.go: no-op stand-ins of rlimit_linux.go off Linux, where
// builds run in-process.

package worker

import (
	"os"
	"time"
)

// rlimit: off Linux builds run in-process (Supported is false).
func rlimit(request) error { return nil }

func fileSizeLimit(int64) error { return nil }

func resetPeak() {}

func cpuUsed() time.Duration { return 0 }

func cpuLimit(int64) error { return nil }

func catchCPU(*os.File) {}
