/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pdeathsig_linux.go: dieWithParent on Linux, which asks the kernel for
// SIGTERM when make (the parent) dies.

package main

import (
	"os"
	"syscall"
)

// dieWithParent asks the kernel for SIGTERM when make (the parent) dies,
// however it dies: the signal handler then stops every process of the run.
func dieWithParent() {
	const prSetPdeathsig = 1
	parent := os.Getppid()
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGTERM), 0)
	if os.Getppid() != parent { // the parent died before the request
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}
