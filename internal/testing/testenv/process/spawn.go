/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// spawn.go: StartCommand, which starts a short-lived helper (not a Process)
// in its own process group and remembers the group for Leaks.

package process

import (
	"os/exec"

	"bggitops.dev/bg-gitops/internal/spawn"
)

// StartCommand starts cmd from the spawning thread, in its own process
// group with a parent-death signal, and remembers its group for Leaks; the
// caller waits for it. For short-lived helpers that are not a Process.
func StartCommand(cmd *exec.Cmd) error {
	cmd.SysProcAttr = sysProcAttr()
	if err := spawn.Start(cmd); err != nil {
		return err
	}
	remember(cmd.Process.Pid)
	return nil
}
