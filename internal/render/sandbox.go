/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// sandboxFS is the file system kustomize sees: every path is resolved with
// resolve (so nothing outside root can be named, directly or through a
// symlink) and handed to the inner file system already resolved; writes are
// refused. When remote bases are allowed, kustomize's own clone directories
// (outside root, on disk) are reachable too.
type sandboxFS struct {
	inner filesys.FileSystem
	root  string
	links linkReader
	// clones, when set, reports paths of kustomize's remote-base clones.
	clones func(p string) bool
}

var _ filesys.FileSystem = (*sandboxFS)(nil)

// newDiskSandbox roots a sandbox at a directory on disk.
func newDiskSandbox(root string) (*sandboxFS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("repository root: %w", err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("repository root %s is not a directory", root)
	}
	return &sandboxFS{inner: filesys.MakeFsOnDisk(), root: real, links: diskLinks}, nil
}

// allowClones makes kustomize's remote-base clone directories reachable.
func (s *sandboxFS) allowClones() {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	s.clones = func(p string) bool {
		r, err := filepath.Rel(tmp, p)
		return err == nil && strings.HasPrefix(r, "kustomize-") && !strings.Contains(r, "..")
	}
}

// path resolves p and picks the file system that holds it.
func (s *sandboxFS) path(p string) (filesys.FileSystem, string, error) {
	if s.clones != nil && filepath.IsAbs(p) && s.clones(filepath.Clean(p)) {
		return filesys.MakeFsOnDisk(), p, nil
	}
	r, err := resolve(s.root, p, s.links)
	if err != nil {
		return nil, "", err
	}
	return s.inner, r, nil
}

func (s *sandboxFS) Create(p string) (filesys.File, error) { return nil, s.readOnly(p) }
func (s *sandboxFS) Mkdir(p string) error                  { return s.readOnly(p) }
func (s *sandboxFS) MkdirAll(p string) error               { return s.readOnly(p) }
func (s *sandboxFS) WriteFile(p string, _ []byte) error    { return s.readOnly(p) }

// RemoveAll is only used by kustomize to clean up its clones.
func (s *sandboxFS) RemoveAll(p string) error {
	if s.clones != nil && s.clones(filepath.Clean(p)) {
		return os.RemoveAll(p)
	}
	return s.readOnly(p)
}

func (s *sandboxFS) readOnly(p string) error {
	return fmt.Errorf("write %s: %w", p, ErrReadOnly)
}

func (s *sandboxFS) Open(p string) (filesys.File, error) {
	fsys, r, err := s.path(p)
	if err != nil {
		return nil, err
	}
	return fsys.Open(r)
}

func (s *sandboxFS) ReadFile(p string) ([]byte, error) {
	fsys, r, err := s.path(p)
	if err != nil {
		return nil, err
	}
	return fsys.ReadFile(r)
}

func (s *sandboxFS) IsDir(p string) bool {
	fsys, r, err := s.path(p)
	return err == nil && fsys.IsDir(r)
}

func (s *sandboxFS) Exists(p string) bool {
	fsys, r, err := s.path(p)
	return err == nil && fsys.Exists(r)
}

func (s *sandboxFS) ReadDir(p string) ([]string, error) {
	fsys, r, err := s.path(p)
	if err != nil {
		return nil, err
	}
	return fsys.ReadDir(r)
}

// CleanedAbs is implemented here rather than delegated: the on-disk version
// calls log.Fatalf on some inputs, which no recover can catch.
func (s *sandboxFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	fsys, r, err := s.path(p)
	if err != nil {
		return "", "", err
	}
	switch {
	case fsys.IsDir(r):
		return filesys.ConfirmedDir(r), "", nil
	case fsys.Exists(r):
		return filesys.ConfirmedDir(filepath.Dir(r)), filepath.Base(r), nil
	}
	return "", "", fmt.Errorf("%s: %w", p, fs.ErrNotExist)
}

// Glob returns the matches that resolve inside the repository.
func (s *sandboxFS) Glob(pattern string) ([]string, error) {
	fsys, r, err := s.path(filepath.Dir(pattern))
	if err != nil {
		return nil, err
	}
	matches, err := fsys.Glob(filepath.Join(r, filepath.Base(pattern)))
	if err != nil {
		return nil, err
	}
	out := matches[:0]
	for _, m := range matches {
		if _, _, err := s.path(m); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

func (s *sandboxFS) Walk(p string, fn filepath.WalkFunc) error {
	fsys, r, err := s.path(p)
	if err != nil {
		return err
	}
	return fsys.Walk(r, fn)
}
