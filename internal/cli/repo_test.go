/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// prRepo: a temporary Git repository made from examples/repo-layout, which the
// tests change and commit to.

package cli

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// prPath is the overlay the pull-request tests diff.
const prPath = "overlays/production"

// prRepo is a temporary repository initialised from examples/repo-layout:
// main holds the example, branch pr one change on top.
type prRepo struct {
	dir string
	t   *testing.T
}

// newPRRepo copies examples/repo-layout, commits it on main and checks out
// a new branch pr.
func newPRRepo(t *testing.T) *prRepo {
	t.Helper()
	r := &prRepo{dir: t.TempDir(), t: t}
	require.NoError(t, copyTree(filepath.Join("..", "..", "examples", "repo-layout"), r.dir))
	r.git("init", "-q", "-b", "main")
	r.commit("example layout")
	r.git("checkout", "-q", "-b", "pr")
	return r
}

func (r *prRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func (r *prRepo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// replace edits a file of the repository; old must occur in it.
func (r *prRepo) replace(file, old, new string) {
	r.t.Helper()
	p := filepath.Join(r.dir, file)
	b, err := os.ReadFile(p)
	require.NoError(r.t, err)
	require.Contains(r.t, string(b), old, "%s", file)
	require.NoError(r.t, os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
}

func (r *prRepo) write(file, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, file)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
