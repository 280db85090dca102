/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// memRoot is where a Git tree is placed in the in-memory file system.
const memRoot = "/repo"

// BuildRef renders path at ref of the local repository repoDir (bare or
// not) without a checkout: ref may be a branch, tag, full or short SHA,
// HEAD or any ref name such as refs/pull/7/head. It returns the objects and
// the resolved commit SHA. The sandbox rules of Build apply; a symlink in
// the tree pointing outside the tree is refused when the build reaches it.
func BuildRef(repoDir, ref, path string, opts Options) ([]*unstructured.Unstructured, string, error) {
	commit, err := resolveCommit(repoDir, ref)
	if err != nil {
		return nil, "", err
	}
	sb, err := treeSandbox(commit)
	if err != nil {
		return nil, commit.Hash.String(), fmt.Errorf("read tree of %s: %w", commit.Hash, err)
	}
	objs, err := build(sb, path, opts)
	return objs, commit.Hash.String(), err
}

// resolveCommit opens repoDir and resolves ref to a commit (annotated tags
// are peeled).
func resolveCommit(repoDir, ref string) (*object.Commit, error) {
	repo, err := git.PlainOpen(repoDir)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", repoDir, err)
	}
	if ref == "" {
		ref = "HEAD"
	}
	h, err := repo.ResolveRevision(plumbing.Revision(ref))
	if err != nil {
		return nil, fmt.Errorf("resolve %q in %s: %w", ref, repoDir, err)
	}
	c, err := repo.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("resolve %q in %s: %w", ref, repoDir, err)
	}
	return c, nil
}

// treeSandbox copies the commit's tree into an in-memory file system under
// memRoot; symlinks are kept aside and resolved by the sandbox.
func treeSandbox(c *object.Commit) (*sandboxFS, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	mem := filesys.MakeFsInMemory()
	if err := mem.MkdirAll(memRoot); err != nil {
		return nil, err
	}
	links := map[string]string{}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := addEntry(mem, links, tree, name, e); err != nil {
			return nil, err
		}
	}
	return &sandboxFS{inner: mem, root: memRoot, links: mapLinks(links)}, nil
}

// addEntry materialises one tree entry; submodules are skipped.
func addEntry(mem filesys.FileSystem, links map[string]string, tree *object.Tree, name string, e object.TreeEntry) error {
	if !validEntryName(e.Name) {
		return fmt.Errorf("tree entry %q: invalid name", name)
	}
	p := path.Join(memRoot, name)
	switch e.Mode {
	case filemode.Dir:
		return mem.MkdirAll(p)
	case filemode.Submodule:
		return nil
	}
	f, err := tree.TreeEntryFile(&e)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	content, err := f.Contents()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if e.Mode == filemode.Symlink {
		links[p] = content
		return nil
	}
	return mem.WriteFile(p, []byte(content))
}

// validEntryName refuses names Git itself refuses, which a crafted tree
// could still carry and which would otherwise be cleaned into other paths.
func validEntryName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}
