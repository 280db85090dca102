/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// fastimport.go: repositories built with git fast-import: NewLargeRepo,
// ImportCommit (with File, Zeros and Text) and TinyObjects.

package gittest

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strconv"
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

// File is a file for ImportCommit, its content streamed from Content.
type File struct {
	Path    string
	Size    int64
	Content io.Reader
}

// Zeros is a file of size zero bytes: it compresses about a thousandfold,
// the shape of a small repository that checks out into a huge file.
func Zeros(path string, size int64) File {
	return File{Path: path, Size: size, Content: io.LimitReader(zeroReader{}, size)}
}

// Text is a small file with the given content.
func Text(path, content string) File {
	return File{Path: path, Size: int64(len(content)), Content: strings.NewReader(content)}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// ImportCommit commits files as a new root commit on branch of the bare
// repository with git fast-import, streaming their content (a file of
// hundreds of MiB never sits in memory); it returns the commit SHA.
func ImportCommit(tb testing.TB, bare, branch string, files ...File) string {
	tb.Helper()
	cmd := exec.Command("git", "fast-import", "--quiet", "--force")
	cmd.Dir = bare
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	werr := func() error {
		defer in.Close()
		const msg = "import\n"
		if _, err := fmt.Fprintf(in, "reset refs/heads/%s\ncommit refs/heads/%s\ncommitter Test <test@example.com> 1700000000 +0000\ndata %d\n%s",
			branch, branch, len(msg), msg); err != nil {
			return err
		}
		for _, f := range files {
			if _, err := fmt.Fprintf(in, "M 644 inline %s\ndata %d\n", f.Path, f.Size); err != nil {
				return err
			}
			if _, err := io.CopyN(in, f.Content, f.Size); err != nil {
				return err
			}
			if _, err := io.WriteString(in, "\n"); err != nil {
				return err
			}
		}
		return nil
	}()
	if err := cmd.Wait(); err != nil || werr != nil {
		tb.Fatalf("git fast-import: %v %v: %s", err, werr, out.String())
	}
	return Git(tb, bare, "rev-parse", "refs/heads/"+branch)
}

// TinyObjects commits n files of a few bytes each, all different (n
// blobs, in directories of a thousand), as a new root commit on branch of
// the bare repository: a small pack of very many objects.
func TinyObjects(tb testing.TB, bare, branch string, n int) string {
	tb.Helper()
	files := make([]File, n)
	for i := range files {
		files[i] = Text(fmt.Sprintf("d%d/%d", i/1000, i), strconv.Itoa(i))
	}
	return ImportCommit(tb, bare, branch, files...)
}
