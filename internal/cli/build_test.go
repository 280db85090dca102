/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDiffBadInputExitsTwo(t *testing.T) {
	r := newPRRepo(t)
	r.replace(prodKustom, "  - path: configmap-patch.yaml\n", "  - path: configmap-patch.yaml\n  - path: missing-patch.yaml\n")
	r.commit("broken head")
	diffArgs := func(base, head, path string, extra ...string) []string {
		return append([]string{"diff", "--repo", r.dir, "--base", base, "--head", head, "--path", path}, extra...)
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown base ref", diffArgs("no-such-branch", "main", prPath), []string{"base:", `"no-such-branch"`, "reference not found"}},
		{"unknown head ref", diffArgs("main", "refs/pull/7/head", prPath), []string{"head:", `"refs/pull/7/head"`}},
		{"head does not render", diffArgs("main", "pr", prPath), []string{"head:", "missing-patch.yaml", "does not exist"}},
		{"path outside the repository", diffArgs("main", "main", "../.."), []string{"leaves the repository"}},
		{"absolute path", diffArgs("main", "main", "/etc"), []string{"absolute paths are not allowed"}},
		{"not a repository", []string{"diff", "--repo", t.TempDir(), "--base", "main", "--head", "main", "--path", prPath}, []string{"open repository"}},
		{"unknown format", diffArgs("main", "main", prPath, "--format", "yaml"), []string{`--format "yaml"`}},
		{"no base", []string{"diff", "--repo", r.dir, "--path", prPath}, []string{"--base is required"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runCLI(t, c.args...)
			assert.Equal(t, 2, res.code, "stdout: %s", res.stdout)
			assert.Empty(t, res.stdout, "nothing on stdout for an error")
			for _, w := range c.want {
				assert.Contains(t, res.stderr, w)
			}
			if c.name == "head does not render" || c.name == "path outside the repository" {
				assert.NotContains(t, res.stderr, r.dir, "build errors name repository paths, not the checkout")
			}
		})
	}
}

func TestBuildBadInputExitsTwo(t *testing.T) {
	r := newPRRepo(t)
	res := runCLI(t, "build", "--repo", r.dir, "--path", "../../..")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "leaves the repository")
	res = runCLI(t, "build", "--repo", r.dir, "--ref", "v9", "--path", prPath)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, `"v9"`)
}
