//go:build !linux

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// stopWithParent where the OS cannot tie a process to its parent.

package cli

import "os/exec"

// stopWithParent: only Linux can tie a process's life to its parent's.
func stopWithParent(*exec.Cmd) {}
