/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// sysproc_linux.go: sysProcAttr on Linux: a process group of its own and a
// parent-death signal.

package gitea

import "syscall"

// sysProcAttr puts Gitea in its own process group (so its git children can
// be signalled with it) and asks the kernel to kill it if we die.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
