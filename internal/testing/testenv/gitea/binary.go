/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// binary.go: LocateBinary, which finds the Gitea binary, and the static
// root it needs.

package gitea

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// ErrBinaryMissing means no Gitea binary was found; `make tools` builds one.
var ErrBinaryMissing = fmt.Errorf("gitea: %w", testenv.ErrBinaryMissing)

// LocateBinary returns the Gitea binary to run: explicit when not empty,
// else $BGGITOPS_BIN_DIR/gitea, else <repository root>/bin/gitea.
func LocateBinary(explicit string) (string, error) {
	for _, p := range candidates(explicit) {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", ErrBinaryMissing
}

func candidates(explicit string) []string {
	if explicit != "" {
		return []string{explicit}
	}
	var out []string
	if dir := os.Getenv("BGGITOPS_BIN_DIR"); dir != "" {
		out = append(out, filepath.Join(dir, "gitea"))
	}
	if root := repoRoot(); root != "" {
		out = append(out, filepath.Join(root, "bin", "gitea"))
	}
	return out
}

// repoRoot finds the module root from the working directory, falling back
// to this source file's location (tests run in their package directory; the
// demo binary may run from anywhere on the machine it was built on).
func repoRoot() string {
	if wd, err := os.Getwd(); err == nil {
		if root := findModuleRoot(wd); root != "" {
			return root
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		return findModuleRoot(filepath.Dir(file))
	}
	return ""
}

func findModuleRoot(dir string) string {
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module bggitops.dev/bg-gitops") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// staticRoot reads <bin>/gitea.static-root, which the Makefile writes: the
// Gitea module's source directory, holding the locale files Gitea needs.
func staticRoot(binary string) (string, error) {
	p := binary + ".static-root"
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read gitea static root: %w", err)
	}
	root := strings.TrimSpace(string(data))
	if _, err := os.Stat(filepath.Join(root, "options", "locale")); err != nil {
		return "", fmt.Errorf("gitea static root %s: %w", root, err)
	}
	return root, nil
}

// Skippable reports whether a Start error may skip a test: the suite's one
// policy, testenv.Skippable.
func Skippable(err error) bool { return testenv.Skippable(err) }
