/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// role.go: RoleEnv and RunRole, which run this executable as one process of
// the system: the simulator, the git server or bg-gitops.

package chaos

import (
	"fmt"
	"os"
)

// RoleEnv makes this executable (the chaos command or the test binary)
// run one process of the system instead of the soak: RunRole runs it.
const RoleEnv = "BGGITOPS_CHAOS_ROLE"

// Roles a re-executed process can take.
const (
	roleSimulator = "flink-operator-simulator"
	roleGitServer = "git-server"
	// roleBGGitops runs the bg-gitops command line (`bg-gitops
	// controller ...`): the same code as bin/bg-gitops, for callers that
	// have not built it (the test of the short variant).
	roleBGGitops = "bg-gitops"
)

// RunRole runs the role RoleEnv names with os.Args and returns its exit
// code; ok is false when RoleEnv is not set (run the soak). Call it first
// in main or TestMain. bgGitops is the bg-gitops command line (cli.Execute):
// passed in, so that this package does not depend on the product's top.
func RunRole(bgGitops func() int) (code int, ok bool) {
	role := os.Getenv(RoleEnv)
	if role == "" {
		return 0, false
	}
	var err error
	switch role {
	case roleSimulator:
		err = runSimulator(os.Args[1:])
	case roleGitServer:
		err = runGitServer(os.Args[1:])
	case roleBGGitops:
		return bgGitops(), true
	default:
		err = fmt.Errorf("unknown %s %q", RoleEnv, role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1, true
	}
	return 0, true
}
