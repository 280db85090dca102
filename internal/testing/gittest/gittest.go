/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package gittest runs real Git servers for tests: bare repositories made
// with the git CLI, smart HTTP through `git http-backend` behind
// net/http/cgi (optionally TLS, basic or bearer auth in front), and an
// in-process SSH server that runs the real `git upload-pack`. Tests only:
// it shells out to git.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Isolate keeps git away from the developer's configuration: an empty
// global config file in a temporary directory (never /dev/null, which git
// would replace when something writes to it), no system config, a fixed
// identity and date handling.
func Isolate(tb testing.TB) {
	tb.Helper()
	dir := tb.TempDir()
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		tb.Fatal(err)
	}
	for k, v := range IsolatedEnv(cfg, dir) {
		tb.Setenv(k, v)
	}
}

// IsolatedEnv is the environment Isolate sets, for callers without a
// testing.TB (TestMain).
func IsolatedEnv(globalConfig, home string) map[string]string {
	return map[string]string{
		"GIT_CONFIG_GLOBAL":   globalConfig,
		"GIT_CONFIG_NOSYSTEM": "1",
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME":     "Test",
		"GIT_AUTHOR_EMAIL":    "test@example.com",
		"GIT_COMMITTER_NAME":  "Test",
		"GIT_COMMITTER_EMAIL": "test@example.com",
		"GIT_TERMINAL_PROMPT": "0",
	}
}

// Git runs git in dir and returns its trimmed stdout; it fails the test on
// error.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// Repo is a bare repository (what servers serve) plus a working clone used
// to make commits and push them.
type Repo struct {
	tb testing.TB
	// Bare is the bare repository's path.
	Bare string
	// Work is the working clone's path.
	Work string
}

// NewRepo creates root/<name>.git and a working clone whose branch is main.
func NewRepo(tb testing.TB, root, name string) *Repo {
	tb.Helper()
	bare := filepath.Join(root, name+".git")
	Git(tb, root, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	work := filepath.Join(tb.TempDir(), name)
	Git(tb, root, "init", "--quiet", "--initial-branch=main", work)
	Git(tb, work, "remote", "add", "origin", bare)
	return &Repo{tb: tb, Bare: bare, Work: work}
}

// Git runs git in the working clone.
func (r *Repo) Git(args ...string) string {
	r.tb.Helper()
	return Git(r.tb, r.Work, args...)
}

// Commit writes files (path to content) in the working clone and commits
// them; it returns the commit SHA.
func (r *Repo) Commit(files map[string]string, msg string) string {
	r.tb.Helper()
	for p, c := range files {
		full := filepath.Join(r.Work, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			r.tb.Fatal(err)
		}
	}
	r.Git("add", "-A")
	r.Git("commit", "--quiet", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}

// Push pushes refspecs (e.g. "main", "v1.0.0") to the bare repository.
func (r *Repo) Push(refspecs ...string) {
	r.tb.Helper()
	r.Git(append([]string{"push", "--quiet", "origin"}, refspecs...)...)
}

// ForcePush pushes refspecs with --force (a moved tag, a rewound branch).
func (r *Repo) ForcePush(refspecs ...string) {
	r.tb.Helper()
	r.Git(append([]string{"push", "--quiet", "--force", "origin"}, refspecs...)...)
}

// Tag creates (or with force moves) a lightweight tag at rev.
func (r *Repo) Tag(name, rev string) {
	r.tb.Helper()
	r.Git("tag", "--force", name, rev)
}

// AnnotatedTag creates (or moves) an annotated tag at rev.
func (r *Repo) AnnotatedTag(name, rev string) {
	r.tb.Helper()
	r.Git("tag", "--force", "-a", "-m", "release "+name, name, rev)
}
