/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package cli holds the cobra commands of the bg-gitops binary.
//
// A file is named after the command it holds, as Flux's CLI names its
// files: create_secret_git.go is `bg-gitops create secret git`, wait*.go
// are `bg-gitops wait` and the polling every --wait shares, verbs*.go the
// request verbs (reconcile, suspend, resume, promote, abort, retry).
// root.go holds the root command and how an error becomes the exit code.
package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries a specific exit code (diff uses 1 for "changes").
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// Execute runs the root command and returns the process exit code.
func Execute() int {
	root := newRootCommand()
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.code != 1 {
			fmt.Fprintln(os.Stderr, "error:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "error:", err)
	return 2
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "bg-gitops",
		Short:         "GitOps for stateful Apache Flink jobs: blue/green rollouts from git push",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCommand(), newControllerCommand(), newBuildCommand(), newDiffCommand())
	root.AddCommand(newRequestCommands()...)
	root.AddCommand(newWaitCommand(), newHistoryCommand(), newRollbackCommand())
	root.AddCommand(newGetCommand())
	root.AddCommand(newCheckCommand(), newCreateCommand())
	root.AddCommand(devCommands()...)
	return root
}
