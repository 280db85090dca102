/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

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
// charged its objects and YAML nodes before kustomize sees it. Every
// operation is also a point where the build's goroutine touches no kyaml
// state, where it leaves the schema gate once past its deadline (schema.go).
type sandboxFS struct {
	inner  filesys.FileSystem
	root   string
	links  linkReader
	budget *budget
	// run is the build's goroutine state (nil outside a build).
	run *buildRun
	// dataOnly holds the files the build reads only as a generator's data
	// (configMapGenerator/secretGenerator files): kustomize does not parse
	// them, so only their text counts (a dashboard in JSON is one string).
	dataOnly map[string]bool
	// lazy holds files whose content is read only when kustomize reads
	// them (BuildRef: blobs of a Git tree); inner holds an empty stand-in.
	lazy map[string]lazyFile

	// tmp, when set, is the directory kustomize clones remote bases into.
	tmp string
	// exclusive: this build runs alone and may set kustomize's schema.
	exclusive bool
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

// op brackets a file operation: the caller defers the function it returns
// with the operation's error. Past the build's deadline the operation
// fails, whatever it did: a goroutine that stepped out of the schema gate
// must not get a schema file to set.
func (s *sandboxFS) op() func(*error) {
	s.run.enterOp()
	return func(err *error) {
		s.run.exitOp()
		if s.run != nil && *err == nil {
			*err = s.budget.alive()
		}
	}
}

// opBool is op for the operations that answer yes or no.
func (s *sandboxFS) opBool() func(*bool) {
	done := s.op()
	return func(ok *bool) {
		var err error
		done(&err)
		if err != nil {
			*ok = false
		}
	}
}

func (s *sandboxFS) Create(p string) (filesys.File, error) { return nil, s.readOnly(p) }
func (s *sandboxFS) Mkdir(p string) error                  { return s.readOnly(p) }
func (s *sandboxFS) MkdirAll(p string) error               { return s.readOnly(p) }
func (s *sandboxFS) WriteFile(p string, _ []byte) error    { return s.readOnly(p) }

// RemoveAll is only used by kustomize to clean up its clones: a clone of
// this build, or one nobody read yet (a clone that failed).
func (s *sandboxFS) RemoveAll(p string) (err error) {
	defer s.op()(&err)
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
func (s *sandboxFS) Open(p string) (f filesys.File, err error) {
	defer s.op()(&err)
	if _, _, err := s.path(p); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("open %s: not supported in a build; files are read whole", p)
}

func (s *sandboxFS) ReadFile(p string) (data []byte, err error) {
	if s.budget != nil && s.budget.lim.readDone != nil {
		defer func() { s.budget.lim.readDone(p, err) }()
	}
	defer s.op()(&err)
	defer func() {
		if err != nil {
			data = nil
		}
	}()
	fsys, r, err := s.path(p)
	if err != nil {
		return nil, err
	}
	data, err = s.read(fsys, r, true)
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

// readResolved reads the resolved path r for the preflight, whose reads
// make no objects.
func (s *sandboxFS) readResolved(fsys filesys.FileSystem, r string) ([]byte, error) {
	return s.read(fsys, r, false)
}

// read reads the resolved path r and charges it (readCounted). A read of
// kustomize (objects) also adds what the file holds to the account of the
// build's patches and replacements, and charges them on the objects read
// so far: before kustomize can apply them (fanout.go).
func (s *sandboxFS) read(fsys filesys.FileSystem, r string, objects bool) ([]byte, error) {
	if s.budget == nil || !objects {
		return s.readCounted(fsys, r, objects)
	}
	objs, nodes := s.budget.objs.Load(), s.budget.nodes.Load()-s.budget.fan.charged.nodes
	data, err := s.readCounted(fsys, r, objects)
	if err != nil {
		return nil, err
	}
	switch {
	case s.dataOnly[r]:
	case isKustomizationFile(r):
		s.countFanOut(r, data, objs, nodes)
	default:
		s.budget.fan.noteDocuments(data)
	}
	if err := s.budget.settle(); err != nil {
		return nil, err
	}
	return data, nil
}

// readCounted reads the resolved path r, charging the budget before the
// content is read when its size is known (a file larger than what is left
// is never read into memory), and charging its YAML nodes and, for a read
// of kustomize (objects), its objects before it returns the content.
func (s *sandboxFS) readCounted(fsys filesys.FileSystem, r string, objects bool) ([]byte, error) {
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
	dataOnly := s.dataOnly[r]
	objects = objects && !dataOnly
	// Objects first where a scan tells them (the usual, clearer refusal
	// of many objects); then the nodes, which bound every parse below:
	// the one that measures the aliases, and the one that counts the
	// objects of Lists and of kustomizations.
	if objects && !isKustomizationFile(r) {
		if n, ok := documentObjects(data); ok {
			if err := s.budget.readObjects(n); err != nil {
				return nil, err
			}
			objects = false
		}
	}
	if err := s.budget.readNodes(readNodes(r, data, dataOnly)); err != nil {
		return nil, err
	}
	if dataOnly {
		return data, nil
	}
	aliasBytes, aliasNodes, err := aliasCost(data)
	if err != nil {
		return nil, s.refuse(fmt.Errorf("%s: %w", rel(s.root, r), err))
	}
	if err := s.budget.more(aliasBytes); err != nil {
		return nil, err
	}
	if err := s.budget.readNodes(aliasNodes); err != nil {
		return nil, err
	}
	if objects {
		if err := s.budget.readObjects(fileObjects(r, data)); err != nil {
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

func (s *sandboxFS) IsDir(p string) (ok bool) {
	defer s.opBool()(&ok)
	fsys, r, err := s.path(p)
	return err == nil && fsys.IsDir(r)
}

func (s *sandboxFS) Exists(p string) (ok bool) {
	defer s.opBool()(&ok)
	fsys, r, err := s.path(p)
	return err == nil && fsys.Exists(r)
}

func (s *sandboxFS) ReadDir(p string) (_ []string, err error) {
	defer s.op()(&err)
	fsys, r, err := s.path(p)
	if err != nil {
		return nil, err
	}
	return fsys.ReadDir(r)
}

// CleanedAbs is implemented here rather than delegated: the on-disk version
// calls log.Fatalf on some inputs, which no recover can catch.
func (s *sandboxFS) CleanedAbs(p string) (_ filesys.ConfirmedDir, _ string, err error) {
	defer s.op()(&err)
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
func (s *sandboxFS) Glob(pattern string) (_ []string, err error) {
	defer s.op()(&err)
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

// Walk calls back into kustomize: the callback runs outside the operation.
func (s *sandboxFS) Walk(p string, fn filepath.WalkFunc) (err error) {
	defer s.op()(&err)
	fsys, r, err := s.path(p)
	if err != nil {
		return err
	}
	return fsys.Walk(r, func(path string, info fs.FileInfo, err error) error {
		if berr := s.budget.alive(); berr != nil {
			return berr
		}
		s.run.exitOp()
		defer s.run.enterOp()
		return fn(path, info, err)
	})
}
