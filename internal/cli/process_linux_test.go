/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// stopWithParent on Linux: a process started by a test dies with the test binary.

package cli

import (
	"os/exec"
	"syscall"
)

// stopWithParent has the kernel send SIGTERM to the process when the test
// binary dies without its cleanups (a test timeout panics past them): a
// controller then exits, and `bg-gitops dev` stops what it started.
func stopWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
