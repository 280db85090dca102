//go:build !linux

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// sysproc_other.go: sysProcAttr off Linux: a process group of its own.

package process

import "syscall"

// sysProcAttr: a process group of its own (no parent-death signal outside
// Linux: only the caller's signal handler stops the children).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
