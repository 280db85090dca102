/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests that the example CI workflow of examples/repo-layout passes diff flags
// that exist.

package cli

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// TestExampleWorkflowUsesRealFlags keeps the example CI workflow in step
// with the diff command: it parses, runs on pull_request, and every flag it
// passes exists.
func TestExampleWorkflowUsesRealFlags(t *testing.T) {
	b, err := os.ReadFile("../../examples/repo-layout/.github/workflows/diff.yaml")
	require.NoError(t, err)
	var wf map[string]any
	require.NoError(t, yaml.Unmarshal(b, &wf))
	on, ok := wf["on"]
	if !ok {
		on = wf["true"] // YAML 1.1 reads a bare on as a boolean; Actions does not
	}
	assert.Contains(t, on, "pull_request")
	cmd := newDiffCommand()
	flags := regexp.MustCompile(`bg-gitops" diff((?:[^\n]*\\\n)*[^\n]*)`).FindSubmatch(b)
	require.NotNil(t, flags, "the workflow runs bg-gitops diff")
	for _, m := range regexp.MustCompile(`--([a-z-]+)`).FindAllSubmatch(flags[1], -1) {
		assert.NotNil(t, cmd.Flags().Lookup(string(m[1])), "--%s", m[1])
	}
	assert.Contains(t, string(flags[1]), "--format markdown")
	assert.Contains(t, string(flags[1]), `--base "origin/${{ github.base_ref }}" --head HEAD`)
}
