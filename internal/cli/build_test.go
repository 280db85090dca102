/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops build`: the manifests it prints, and exit 2 on bad input.

package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildBadInputExitsTwo(t *testing.T) {
	r := newPRRepo(t)
	res := runCLI(t, "build", "--repo", r.dir, "--path", "../../..")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "leaves the repository")
	res = runCLI(t, "build", "--repo", r.dir, "--ref", "v9", "--path", prPath)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, `"v9"`)
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
