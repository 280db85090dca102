/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitRepo is a throw-away repository driven by the real git CLI, isolated
// from the developer's and the machine's git configuration.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "gitconfig")
	require.NoError(t, os.WriteFile(cfg, nil, 0o644))
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", tmp)
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.com",
	} {
		t.Setenv(k, v)
	}
	r := &gitRepo{t: t, dir: filepath.Join(tmp, "repo")}
	r.git("init", "-q", "-b", "main", r.dir)
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	if args[0] != "init" {
		cmd.Dir = r.dir
	}
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// copyTree copies a directory (files only) into the repository.
func (r *gitRepo) copyTree(from string) {
	r.t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return r.write(strings.TrimPrefix(p, from+"/"), string(b))
	})
	require.NoError(r.t, err)
}

func (r *gitRepo) write(p, content string) error {
	full := filepath.Join(r.dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	return os.WriteFile(full, []byte(content), 0o644)
}

func (r *gitRepo) commit(msg string) string {
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func TestBuildRefMatchesBuildOfTheCheckout(t *testing.T) {
	r := newGitRepo(t)
	r.copyTree(examples)
	sha := r.commit("layout")
	for _, overlay := range []string{"overlays/staging", "overlays/production"} {
		objs, got, err := BuildRef(r.dir, "main", overlay, goldenOpts)
		require.NoError(t, err)
		assert.Equal(t, sha, got)
		fromRef, err := EncodeYAML(objs)
		require.NoError(t, err)
		fromDisk, err := BuildYAML(r.dir, overlay, goldenOpts)
		require.NoError(t, err)
		assert.Equal(t, string(fromDisk), string(fromRef))
	}
}

func TestBuildRefResolvesAnyRef(t *testing.T) {
	r := newGitRepo(t)
	r.copyTree(examples)
	v1 := r.commit("v1")
	r.git("tag", "-a", "v1.0.0", "-m", "release")
	r.git("tag", "light", v1)
	require.NoError(t, r.write("overlays/production/flinkbluegreendeployment-patch.yaml",
		strings.Replace(readFile(t, examples+"/overlays/production/flinkbluegreendeployment-patch.yaml"),
			"parallelism: 8", "parallelism: 12", 1)))
	v2 := r.commit("scale out")
	r.git("update-ref", "refs/pull/7/head", v2)
	r.git("checkout", "-q", "-b", "feature", v1)

	for ref, want := range map[string]string{
		"main": v2, "refs/heads/main": v2, "HEAD": v1, "feature": v1,
		"v1.0.0": v1, "refs/tags/v1.0.0": v1, "light": v1,
		v2: v2, v2[:7]: v2, "refs/pull/7/head": v2, "main~1": v1,
	} {
		t.Run(ref, func(t *testing.T) {
			objs, got, err := BuildRef(r.dir, ref, "overlays/production", Options{})
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Equal(t, map[string]int64{v1: 8, v2: 12}[want], parallelism(t, objs))
		})
	}
}

func TestBuildRefUnknownRef(t *testing.T) {
	r := newGitRepo(t)
	r.copyTree(examples)
	r.commit("layout")
	_, _, err := BuildRef(r.dir, "no-such-branch", "overlays/staging", Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `resolve "no-such-branch"`)
}

func TestBuildRefRefusesSymlinksOutOfTheTree(t *testing.T) {
	r := newGitRepo(t)
	require.NoError(t, r.write("app/kustomization.yaml", kustomization("cm.yaml", "passwd")))
	require.NoError(t, r.write("app/cm.yaml", configMap))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(r.dir, "app/passwd")))
	require.NoError(t, os.Symlink("../app", filepath.Join(r.dir, "inside")))
	require.NoError(t, r.write("up/kustomization.yaml", kustomization("../escape/passwd")))
	require.NoError(t, os.Symlink("../..", filepath.Join(r.dir, "escape")))
	r.commit("symlinks")

	objs, _, err := BuildRef(r.dir, "main", "app", Options{})
	require.ErrorIs(t, err, ErrLeavesRepository)
	assert.Nil(t, objs)
	assert.Contains(t, err.Error(), "kustomize build app: resource passwd: symlink app/passwd -> /etc/passwd leaves the repository")

	_, _, err = BuildRef(r.dir, "main", "inside", Options{})
	require.ErrorIs(t, err, ErrLeavesRepository, "a symlinked build path still resolves inside and reaches the bad link")

	_, _, err = BuildRef(r.dir, "main", "up", Options{})
	require.ErrorIs(t, err, ErrLeavesRepository)
	assert.Contains(t, err.Error(), "symlink escape -> ../.. leaves the repository")
}

func TestBuildRefFollowsSymlinksInsideTheTree(t *testing.T) {
	r := newGitRepo(t)
	require.NoError(t, r.write("base/kustomization.yaml", kustomization("cm.yaml")))
	require.NoError(t, r.write("base/cm.yaml", configMap))
	require.NoError(t, r.write("overlay/kustomization.yaml", kustomization("linked-base", "linked-cm.yaml")+"namePrefix: x-\n"))
	require.NoError(t, os.Symlink("../base", filepath.Join(r.dir, "overlay/linked-base")))
	require.NoError(t, os.Symlink("../base/cm.yaml", filepath.Join(r.dir, "overlay/other.yaml")))
	require.NoError(t, r.write("overlay/linked-cm.yaml", strings.Replace(configMap, "app-config", "second", 1)))
	r.commit("links")
	objs, _, err := BuildRef(r.dir, "main", "overlay", Options{})
	require.NoError(t, err)
	var names []string
	for _, u := range objs {
		names = append(names, u.GetName())
	}
	assert.Equal(t, []string{"x-app-config", "x-second"}, names)
}

func parallelism(t *testing.T, objs []*unstructuredT) int64 {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == "FlinkBlueGreenDeployment" {
			p, _, err := unstructuredNestedInt64(u.Object, "spec", "template", "spec", "job", "parallelism")
			require.NoError(t, err)
			return p
		}
	}
	t.Fatal("no FlinkBlueGreenDeployment")
	return 0
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
