/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// sandbox.go: sandboxFS, the file system kustomize sees — paths resolved
// inside the root, writes refused, reads charged to the budget, remote-base
// clones kept to the build that made them.

package render

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// sandboxFS is the file system kustomize sees: every path is resolved with
// resolve (so nothing outside root can be named, directly or through a
// symlink) and handed to the inner file system already resolved; writes are
// refused. When remote bases are allowed, the directories kustomize clones
// remote bases into are reachable too, each under the same rule with the
// clone as its root, and only by the build that cloned it. Every operation
// is charged to the build's budget, so a build past its deadline or over
// its read limits fails at its next file operation, and every file read is
// charged its bytes before kustomize sees it.
type sandboxFS struct {
	inner  filesys.FileSystem
	root   string
	links  linkReader
	budget *budget
	// lazy holds files whose content is read only when kustomize reads
	// them (BuildRef: blobs of a Git tree); inner holds an empty stand-in.
	lazy map[string]lazyFile

	// tmp, when set, is the directory kustomize clones remote bases into.
	tmp string
	// allowFileURLs lets remote bases be file:// URLs.
	allowFileURLs bool

	mu     sync.Mutex
	clones []string // clone roots this sandbox claimed
	// refused is the first remote kustomization refused: kustomize
	// swallows read errors of kustomization files (it probes three names),
	// so the build reports this one.
	refused error
}

func (s *sandboxFS) refuse(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = err
	}
	return err
}

func (s *sandboxFS) firstRefusal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

type lazyFile struct {
	size int64
	read func() ([]byte, error)
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
	return &sandboxFS{inner: diskFS, root: real, links: diskLinks}, nil
}

// allowClones makes kustomize's remote-base clone directories reachable.
func (s *sandboxFS) allowClones() {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	s.tmp = tmp
}

// cloneOwners maps every clone directory in use to the sandbox of the build
// that cloned it: the first sandbox to touch a fresh kustomize-* directory
// is the build whose kustomize just created it (only it knows the random
// name), and no other build may read it.
var (
	cloneMu     sync.Mutex
	cloneOwners = map[string]*sandboxFS{}
)

// cloneRoot returns the clone directory that holds the clean absolute path
// p, if p is in one.
func (s *sandboxFS) cloneRoot(p string) (string, bool) {
	if s.tmp == "" || !filepath.IsAbs(p) {
		return "", false
	}
	r, err := filepath.Rel(s.tmp, p)
	if err != nil || r == "." || strings.HasPrefix(r, "..") {
		return "", false
	}
	first, _, _ := strings.Cut(r, string(filepath.Separator))
	if !strings.HasPrefix(first, "kustomize-") {
		return "", false
	}
	root := filepath.Join(s.tmp, first)
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		return "", false
	}
	return root, true
}

func (s *sandboxFS) claim(root, p string) error {
	cloneMu.Lock()
	defer cloneMu.Unlock()
	switch owner := cloneOwners[root]; owner {
	case s:
		return nil
	case nil:
		cloneOwners[root] = s
		s.mu.Lock()
		s.clones = append(s.clones, root)
		s.mu.Unlock()
		return nil
	}
	return &PathError{Path: p}
}

// releaseClones gives up the clones of a finished build.
func (s *sandboxFS) releaseClones() {
	cloneMu.Lock()
	defer cloneMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, root := range s.clones {
		if cloneOwners[root] == s {
			delete(cloneOwners, root)
		}
	}
	s.clones = nil
}

// path resolves p and picks the file system that holds it.
func (s *sandboxFS) path(p string) (filesys.FileSystem, string, error) {
	if err := s.budget.alive(); err != nil {
		return nil, "", err
	}
	if clean := filepath.Clean(p); filepath.IsAbs(clean) {
		if root, ok := s.cloneRoot(clean); ok {
			if err := s.claim(root, p); err != nil {
				return nil, "", err
			}
			r, err := resolve(root, clean, diskLinks)
			if err != nil {
				return nil, "", err
			}
			return diskFS, r, nil
		}
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

// RemoveAll is only used by kustomize to clean up its clones: a clone of
// this build, or one nobody read yet (a clone that failed).
func (s *sandboxFS) RemoveAll(p string) error {
	clean := filepath.Clean(p)
	if root, ok := s.cloneRoot(clean); ok && root == clean {
		cloneMu.Lock()
		owner := cloneOwners[root]
		if owner == s || owner == nil {
			delete(cloneOwners, root)
		}
		cloneMu.Unlock()
		if owner == s || owner == nil {
			return os.RemoveAll(root)
		}
	}
	return s.readOnly(p)
}

func (s *sandboxFS) readOnly(p string) error {
	return fmt.Errorf("write %s: %w", p, ErrReadOnly)
}

// Open is not used by kustomize builds, and what is read through a file
// handle could not be counted before kustomize parses it: it is refused.
func (s *sandboxFS) Open(p string) (filesys.File, error) {
	if _, _, err := s.path(p); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("open %s: not supported in a build; files are read whole", p)
}

func (s *sandboxFS) ReadFile(p string) ([]byte, error) {
	fsys, r, err := s.path(p)
	if err != nil {
		return nil, err
	}
	data, err := s.readResolved(fsys, r)
	if err != nil {
		return nil, err
	}
	if root, ok := s.cloneRoot(r); ok {
		if err := s.checkRemoteKustomization(root, r, data); err != nil {
			return nil, s.refuse(err)
		}
	}
	return data, nil
}

// readResolved reads the resolved path r, charging the budget before the
// content is read when its size is known (a file larger than what is left
// is never read into memory), and the rest once it is read.
func (s *sandboxFS) readResolved(fsys filesys.FileSystem, r string) ([]byte, error) {
	size := s.size(fsys, r)
	if err := s.budget.read(r, size); err != nil {
		return nil, err
	}
	var data []byte
	var err error
	switch lf, ok := s.lazy[r]; {
	case ok:
		data, err = lf.read()
	case isDisk(fsys):
		data, err = readCapped(r, s.budget.remaining())
	default:
		data, err = fsys.ReadFile(r)
	}
	if err != nil {
		return nil, err
	}
	if extra := int64(len(data)) - max(size, 0); extra > 0 {
		if err := s.budget.more(extra); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// size is the size of the file r, or -1 when it is not known up front.
func (s *sandboxFS) size(fsys filesys.FileSystem, r string) int64 {
	if lf, ok := s.lazy[r]; ok {
		return lf.size
	}
	if isDisk(fsys) {
		if fi, err := os.Stat(r); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	}
	return -1
}

// diskFS is the real file system, for repositories and clones on disk.
var diskFS = filesys.MakeFsOnDisk()

func isDisk(fsys filesys.FileSystem) bool { return fsys == diskFS }

// readCapped reads at most limit+1 bytes of a file (limit < 0: all), so a
// file that grew after it was measured still cannot exhaust memory.
func readCapped(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit+1)
	}
	return io.ReadAll(r)
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

// Walk stops at the build's deadline, between two entries.
func (s *sandboxFS) Walk(p string, fn filepath.WalkFunc) error {
	fsys, r, err := s.path(p)
	if err != nil {
		return err
	}
	return fsys.Walk(r, func(path string, info fs.FileInfo, err error) error {
		if berr := s.budget.alive(); berr != nil {
			return berr
		}
		return fn(path, info, err)
	})
}
