/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// git.go: Server.Commit, which commits files in a working copy and pushes
// them, with git isolated from the developer's configuration.

package gitea

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Commit writes files (path → content; empty content deletes the file) into
// a working copy of repo kept under Dir, commits them on branch main, pushes
// and returns the new commit's SHA. Successive calls build on each other.
func (s *Server) Commit(ctx context.Context, repo string, files map[string]string, message string) (string, error) {
	work := filepath.Join(s.dir, "work", repo)
	if err := s.ensureWorktree(ctx, work); err != nil {
		return "", err
	}
	for name, content := range files {
		if err := writeOrRemove(filepath.Join(work, name), content); err != nil {
			return "", err
		}
	}
	steps := [][]string{
		{"add", "-A"},
		{"commit", "--allow-empty", "-q", "-m", message},
		{"push", "-q", s.AuthCloneURL(repo), "HEAD:refs/heads/main"},
	}
	for _, args := range steps {
		if _, err := s.git(ctx, work, args...); err != nil {
			return "", err
		}
	}
	sha, err := s.git(ctx, work, "rev-parse", "HEAD")
	return strings.TrimSpace(sha), err
}

func (s *Server) ensureWorktree(ctx context.Context, work string) error {
	if _, err := os.Stat(filepath.Join(work, ".git")); err == nil {
		return nil
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	_, err := s.git(ctx, work, "init", "-q", "-b", "main")
	return err
}

func writeOrRemove(path, content string) error {
	if content == "" {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

// git runs git isolated from the developer's configuration.
func (s *Server) git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(env(s.dir),
		"GIT_AUTHOR_NAME=bg-gitops test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=bg-gitops test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_TERMINAL_PROMPT=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		// The push URL carries the password: never echo the arguments.
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, s.redact(errOut.String()))
	}
	return out.String(), nil
}

func (s *Server) redact(msg string) string {
	return strings.ReplaceAll(msg, s.AdminPassword, "***")
}
