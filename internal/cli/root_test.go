/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A missing or unknown kind (or subcommand) fails with exit 2, names what
// the command takes and suggests the closest: a script with a typo never
// "succeeds" on the help text.
func TestMissingOrUnknownSubcommandsExitTwo(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "gr"}, `unknown "gr"; bg-gitops get needs one of: fbgd, gitrepository; did you mean gitrepository?`},
		{[]string{"get"}, "bg-gitops get needs one of: fbgd, gitrepository"},
		{[]string{"suspend", "fbgd"}, `bg-gitops suspend: unknown "fbgd"; bg-gitops suspend needs one of: gitrepository`},
		{[]string{"promote", "orders"}, `bg-gitops promote: unknown "orders"; bg-gitops promote needs one of: fbgd`},
		{[]string{"wait", "bluegreen"}, "did you mean fbgd?"},
		{[]string{"suspend", "gitrepo"}, "needs one of: gitrepository; did you mean gitrepository? (see --help)"},
		{[]string{"create", "secret", "bogus"}, "needs one of: forge, git, webhook"},
		{[]string{"reconcile"}, "bg-gitops reconcile needs one of: gitrepository"},
		{[]string{"help", "nonexistent"}, `unknown help topic "nonexistent"`},
	} {
		res := runCLI(t, tc.args...)
		assert.Equal(t, 2, res.code, "%v: stdout %q", tc.args, res.stdout)
		assert.Contains(t, res.stderr, tc.want, "%v", tc.args)
		assert.Empty(t, res.stdout, "%v prints no help on stdout", tc.args)
	}
	assert.Equal(t, 0, runCLI(t, "get", "--help").code, "--help still succeeds")
	assert.Equal(t, 0, runCLI(t, "help", "get").code, "help of a command still succeeds")
}
