/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitref.go: BuildRef and ResolveSHA — rendering a ref of a local repository
// from its object store through an in-memory tree, without a checkout.

package render

import (
	"context"
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
	objs, err := build(context.Background(), sb, path, opts)
	return objs, commit.Hash.String(), err
}

// ResolveSHA returns the commit SHA ref names in the local repository
// repoDir (bare or not).
func ResolveSHA(repoDir, ref string) (string, error) {
	c, err := resolveCommit(repoDir, ref)
	if err != nil {
		return "", err
	}
	return c.Hash.String(), nil
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

// treeSandbox lays the commit's tree out in an in-memory file system under
// memRoot: directories and empty stand-ins for files, whose content is read
// from the object store only when the build reads them (and charged to its
// budget before it is); symlinks are kept aside and resolved by the sandbox.
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
	lazy := map[string]lazyFile{}
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
		if err := addEntry(mem, links, lazy, tree, name, e); err != nil {
			return nil, err
		}
	}
	return &sandboxFS{inner: mem, root: memRoot, links: mapLinks(links), lazy: lazy}, nil
}

// maxLinkTarget bounds a symlink's target, as the kernel's PATH_MAX does.
const maxLinkTarget = 4096

// addEntry lays out one tree entry; submodules are skipped.
func addEntry(mem filesys.FileSystem, links map[string]string, lazy map[string]lazyFile, tree *object.Tree, name string, e object.TreeEntry) error {
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
	if e.Mode == filemode.Symlink {
		if f.Size > maxLinkTarget {
			return fmt.Errorf("%s: symlink target longer than %d bytes", name, maxLinkTarget)
		}
		content, err := f.Contents()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		links[p] = content
		return nil
	}
	lazy[p] = lazyFile{size: f.Size, read: func() ([]byte, error) {
		r, err := f.Reader()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer r.Close()
		// The blob's size was charged already; never read past it.
		b, err := io.ReadAll(io.LimitReader(r, f.Size))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return b, nil
	}}
	return mem.WriteFile(p, nil)
}

// validEntryName refuses names Git itself refuses, which a crafted tree
// could still carry and which would otherwise be cleaned into other paths.
func validEntryName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}
