/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// sysproc_linux.go: sysProcAttr on Linux: a process group of its own,
// killed with the forking thread.

package process

import "syscall"

// sysProcAttr: a process group of its own, killed by the kernel when the
// forking thread (see spawn) dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
