/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The test binary's setup (git kept from the user's config), runCLI, which runs
// a command in process, and the golden files.

package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "bg-gitops-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := isolateGit(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopCluster()
	return m.Run()
}

// isolateGit keeps the developer's and the system's git config out of the
// tests (an empty file, never /dev/null: see CONVENTIONS.md) and fixes
// the commit identity and dates, so commits are reproducible.
func isolateGit(dir string) error {
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL": cfg, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
		"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
	} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// result of one in-process run of the bg-gitops command.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the root command in-process and computes the exit code the
// way Execute does (message on stderr unless the code is 1).
func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	code := 0
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
		if ee.code != 1 {
			fmt.Fprintln(&errOut, "error:", ee.err)
		}
	default:
		code = 2
		fmt.Fprintln(&errOut, "error:", err)
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// update rewrites the golden files (testdata/golden, testdata/get,
// testdata/history) from the current output.
var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// golden compares got with the file at path, or writes it there with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/cli -run TestDiffGolden -update")
	assert.Equal(t, string(want), got, "%s differs; rerun with -update if the change is intended", path)
}
