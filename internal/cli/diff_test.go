/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops diff`: the output of every pull-request case in each
// format (golden files), its exit codes, and no secret in any output.

package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/review"
)

var formats = map[string]string{"text": "txt", "markdown": "md", "json": "json"}

// TestDiffGolden diffs every pull-request case in all three formats.
func TestDiffGolden(t *testing.T) {
	for _, c := range prCases {
		t.Run(c.name, func(t *testing.T) {
			r := newPRRepo(t)
			base := r.git("rev-parse", "HEAD")
			c.change(r)
			head := r.commit(c.name)
			for format, ext := range formats {
				res := runCLI(t, "diff", "--repo", r.dir, "--base", "main", "--head", "pr", "--path", prPath, "--format", format)
				require.Equal(t, 1, res.code, "exit code 1 = changes; stderr: %s", res.stderr)
				assert.Empty(t, res.stderr)
				assertNoSecret(t, res.stdout)
				out := strings.NewReplacer(base, "<base-sha>", head, "<head-sha>", base[:12], "<base>", head[:12], "<head>").Replace(res.stdout)
				golden(t, filepath.Join("testdata", "golden", c.name+"."+ext), out)
			}
			assertAnnounced(t, r, c)
		})
	}
}

// assertAnnounced checks the JSON report's plan for the
// FlinkBlueGreenDeployment.
func assertAnnounced(t *testing.T, r *prRepo, c prCase) {
	t.Helper()
	res := runCLI(t, "diff", "--repo", r.dir, "--base", "main", "--head", "pr", "--path", prPath, "--format", "json")
	var rep review.Report
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep))
	var got review.Action
	for _, o := range rep.Objects {
		if o.Deployment != nil {
			got = o.Deployment.Action
		}
	}
	assert.Equal(t, c.action, got)
}

func assertNoSecret(t *testing.T, out string) {
	t.Helper()
	for _, s := range []string{newPassword, newPasswordBase64, oldPassword, "change-me", "c3RhdGUtbWFjaGluZQ=="} {
		assert.NotContains(t, out, s, "a Secret value leaked into the diff")
	}
}

func TestDiffNoChangeExitsZero(t *testing.T) {
	r := newPRRepo(t)
	r.commit("empty")
	for format := range formats {
		res := runCLI(t, "diff", "--repo", r.dir, "--base", "main", "--head", "pr", "--path", prPath, "--format", format)
		assert.Equal(t, 0, res.code, res.stderr)
	}
	res := runCLI(t, "diff", "--repo", r.dir, "--base", "main", "--head", "pr", "--path", prPath)
	assert.Contains(t, res.stdout, "No changes.")
}

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

// Edits not committed under the path are not compared: diff says so on
// stderr (the report stays that of the commits), and says nothing of
// edits elsewhere in the working tree.
func TestDiffWarnsOfUncommittedChangesUnderThePath(t *testing.T) {
	r := newPRRepo(t)
	r.write("README.md", "elsewhere\n")
	res := runCLI(t, "diff", "--repo", r.dir, "--base", "main", "--head", "main", "--path", prPath)
	assert.Equal(t, 0, res.code, res.stderr)
	assert.NotContains(t, res.stderr, "uncommitted")

	r.write(prPath+"/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	res = runCLI(t, "diff", "--repo", r.dir, "--base", "main", "--head", "main", "--path", prPath)
	assert.Equal(t, 0, res.code, "the commits are compared: no change")
	assert.Contains(t, res.stderr, "warning: 1 file(s) under "+prPath+" have uncommitted changes; diff compares commits, not the working tree")
}

// The path in the spelling of the GitRepository's spec.path
// ("./overlays/production", as the README writes it) or with a trailing
// slash names the same directory: uncommitted edits under it are warned
// of all the same.
func TestDiffWarnsOfUncommittedChangesUnderAPathSpelledWithDotSlash(t *testing.T) {
	r := newPRRepo(t)
	r.write(prPath+"/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	for _, p := range []string{"./" + prPath, prPath + "/", "./" + prPath + "/"} {
		res := runCLI(t, "diff", "--repo", r.dir, "--base", "main", "--head", "main", "--path", p)
		assert.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stderr, "warning: 1 file(s) under "+p+" have uncommitted changes", "--path %s", p)
	}
}
