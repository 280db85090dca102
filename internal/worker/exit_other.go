//go:build !linux

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// exit_other.go: stand-ins of exit_linux.go off Linux; a worker's death is
// reported with its error and stderr.

package worker

import (
	"fmt"
	"os/exec"
)

func isolate(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

func waitExited(int) {}

func hasChildren(int) bool { return false }

func groupHasOthers(int) bool { return false }

func groupOthers(int) []string { return nil }

func ownPeak() int64 { return 0 }

func exitOf(cmd *exec.Cmd, runErr error, stderr string, _ request, _ int64) error {
	if cmd.ProcessState != nil && cmd.ProcessState.Success() {
		return nil
	}
	return fmt.Errorf("the render worker died: %v: %s", runErr, stderr)
}
