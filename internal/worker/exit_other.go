//go:build !linux

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"fmt"
	"os/exec"
)

func isolate(*exec.Cmd) {}

func exitOf(cmd *exec.Cmd, runErr error, stderr string, _ request) error {
	if cmd.ProcessState != nil && cmd.ProcessState.Success() {
		return nil
	}
	return fmt.Errorf("the render worker died: %v: %s", runErr, stderr)
}
