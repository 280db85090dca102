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
	"slices"
	"strings"

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
	root.AddCommand(newVersionCommand(), newControllerCommand(), newBuildCommand(), newDiffCommand(), newPlanCommand())
	root.AddCommand(newRequestCommands()...)
	root.AddCommand(newWaitCommand(), newHistoryCommand(), newRollbackCommand())
	root.AddCommand(newGetCommand())
	root.AddCommand(newCheckCommand(), newCreateCommand())
	root.AddCommand(devCommands()...)
	for _, c := range root.Commands() {
		requireSubcommands(c)
	}
	root.SetHelpCommand(newHelpCommand())
	return root
}

// newHelpCommand is cobra's help command, except that a topic that names
// no command exits 2, as an unknown subcommand does.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return &exitError{code: 2, err: fmt.Errorf("unknown help topic %q (see bg-gitops --help)", strings.Join(args, " "))}
			}
			return cmd.Help()
		},
	}
}

// kindHints are what a user may type for a kind, for "did you mean".
var kindHints = map[string][]string{
	gitRepositoryKind.name: {"gr", "repo", "gitrepo", "repository", "source"},
	fbgdKind.name:          {"fbg", "bluegreen", "flinkbluegreen", "fd", "flinkdeployment"},
}

// requireSubcommands makes every command under c that only groups
// subcommands (`get`, `suspend`, `create secret`, ...) fail with exit 2
// when its subcommand (a kind) is missing or unknown, naming the ones it
// takes, instead of printing its help and exiting 0: a script with a
// typo does not "succeed".
func requireSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		requireSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
				s.SuggestFor = append(s.SuggestFor, kindHints[s.Name()]...)
			}
		}
		msg := fmt.Sprintf("%s needs one of: %s", cmd.CommandPath(), strings.Join(names, ", "))
		if len(args) > 0 {
			msg = fmt.Sprintf("%s: unknown %q; %s", cmd.CommandPath(), args[0], msg)
			// A hint that is also a prefix of the kind (gitrepo) names it once.
			if s := slices.Compact(cmd.SuggestionsFor(args[0])); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
		}
		return &exitError{code: 2, err: errors.New(msg + " (see --help)")}
	}
}
