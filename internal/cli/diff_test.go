/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/review"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

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

func TestBuildPrintsManifests(t *testing.T) {
	r := newPRRepo(t)
	r.replace(fbgdPatch, "image: flink:1.20.1-java17", "image: flink:9.9.9")
	worktree := runCLI(t, "build", "--repo", r.dir, "--path", prPath)
	require.Equal(t, 0, worktree.code, worktree.stderr)
	assert.Contains(t, worktree.stdout, "image: flink:9.9.9", "no --ref renders the working tree")
	atMain := runCLI(t, "build", "--repo", r.dir, "--ref", "main", "--path", prPath)
	require.Equal(t, 0, atMain.code, atMain.stderr)
	assert.Contains(t, atMain.stdout, "image: flink:1.20.1-java17")
	assert.Contains(t, atMain.stdout, "kind: FlinkBlueGreenDeployment")
	assert.Contains(t, atMain.stdout, "namespace: flink-production")
}
