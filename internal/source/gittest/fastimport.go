/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package gittest

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// NewLargeRepo creates the bare repository root/<name>.git with `commits`
// commits on main: the first adds `files` files, each later one rewrites
// five of them. git fast-import builds it in a second or two.
func NewLargeRepo(tb testing.TB, root, name string, commits, files int) string {
	tb.Helper()
	bare := root + "/" + name + ".git"
	Git(tb, root, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	var s bytes.Buffer
	for c := 1; c <= commits; c++ {
		fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\ncommitter Test <test@example.com> %d +0000\n", c, 1700000000+c)
		msg := fmt.Sprintf("commit %d\n", c)
		fmt.Fprintf(&s, "data %d\n%s", len(msg), msg)
		if c > 1 {
			fmt.Fprintf(&s, "from :%d\n", c-1)
		}
		for _, f := range touched(c, files) {
			content := fmt.Sprintf("file: %d\ncommit: %d\n%s", f, c, strings.Repeat("padding line of a manifest\n", 20))
			fmt.Fprintf(&s, "M 644 inline dir%d/file%d.yaml\ndata %d\n%s\n", f%10, f, len(content), content)
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = bare
	cmd.Stdin = &s
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git fast-import: %v: %s", err, out)
	}
	return bare
}

func touched(commit, files int) []int {
	if commit == 1 {
		all := make([]int, files)
		for i := range all {
			all[i] = i
		}
		return all
	}
	var fs []int
	for i := range 5 {
		fs = append(fs, (commit*7+i*31)%files)
	}
	return fs
}
