/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// checkout.go: checking out a fetched commit, after checking its tree's file
// sizes, total and entry count against the limits.

package source

import (
	"errors"
	"fmt"
	"path"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// checkedOut names the commit whose checkout completed. go-git moves HEAD
// before it writes the files, so HEAD alone cannot tell a finished
// checkout from one whose process was killed halfway (a worker at its
// deadline or limit): the files would be a mix of two commits.
const checkedOut = plumbing.ReferenceName("refs/bg-gitops/checked-out")

// checkout makes the worktree hold commit h, after checking from the
// object sizes alone that it fits lim: nothing is written, and no blob is
// read, for a commit that does not fit.
func checkout(repo *git.Repository, h plumbing.Hash, lim Limits) error {
	if ref, err := repo.Reference(checkedOut, false); err == nil && ref.Hash() == h {
		return nil
	}
	if err := checkTree(repo.Storer, h, lim); err != nil {
		return err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return cacheErr(err)
	}
	if err := repo.Storer.RemoveReference(checkedOut); err != nil {
		return cacheErr(err)
	}
	// The index is written in place: one a killed checkout cut short
	// would fail every checkout after it. Started empty, the checkout
	// writes every file.
	if err := repo.Storer.SetIndex(&index.Index{Version: 2}); err != nil {
		return cacheErr(err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Hash: h, Force: true}); err != nil {
		return cacheErr(fmt.Errorf("checkout %s: %w", h, err))
	}
	if err := wt.Clean(&git.CleanOptions{Dir: true}); err != nil {
		return cacheErr(err)
	}
	return cacheErr(repo.Storer.SetReference(plumbing.NewHashReference(checkedOut, h)))
}

// objectSizer is implemented by go-git's filesystem storage: the size of
// an object from its header, without reading it.
type objectSizer interface {
	EncodedObjectSize(plumbing.Hash) (int64, error)
}

// checkTree walks the tree of commit h and checks every file's size, their
// total and the number of entries against lim. Each path counts, however
// many paths share one blob, because each is written to disk.
func checkTree(s storer.EncodedObjectStorer, h plumbing.Hash, lim Limits) error {
	sizer, ok := s.(objectSizer)
	if !ok {
		return cacheErr(errors.New("cache storage cannot tell object sizes"))
	}
	c := &treeCheck{s: s, sizer: sizer, lim: lim, commit: h}
	if err := c.fits(h, "commit "+h.String()); err != nil {
		return err
	}
	commit, err := object.GetCommit(s, h)
	if err != nil {
		return cacheErr(err)
	}
	return c.walk(commit.TreeHash, "")
}

type treeCheck struct {
	s      storer.EncodedObjectStorer
	sizer  objectSizer
	lim    Limits
	commit plumbing.Hash
	files  int64
	bytes  int64
}

// fits checks one object's size before it is read.
func (c *treeCheck) fits(h plumbing.Hash, what string) error {
	size, err := c.sizer.EncodedObjectSize(h)
	if err != nil {
		return cacheErr(fmt.Errorf("%s: %w", what, err))
	}
	if over(size, c.lim.MaxFileBytes) {
		return limitErr(fmt.Sprintf("checkout of %s: %s is %s", c.commit, what, humanSize(size)),
			"file size limit", c.lim.MaxFileBytes, FlagMaxFileSize)
	}
	return nil
}

func (c *treeCheck) walk(h plumbing.Hash, dir string) error {
	what := "the directory listing of " + dir
	if dir == "" {
		what = "the root directory listing"
	}
	if err := c.fits(h, what); err != nil {
		return err
	}
	tree, err := object.GetTree(c.s, h)
	if err != nil {
		return cacheErr(err)
	}
	for _, e := range tree.Entries {
		p := path.Join(dir, e.Name)
		if c.files++; over(c.files, int64(c.lim.MaxFiles)) {
			return fileCountErr(fmt.Sprintf("checkout of %s: more than %d files and directories", c.commit, c.lim.MaxFiles), int64(c.lim.MaxFiles))
		}
		switch e.Mode {
		case filemode.Dir:
			if err := c.walk(e.Hash, p); err != nil {
				return err
			}
		case filemode.Submodule:
			// A gitlink names a commit of another repository, which is
			// not fetched: the checkout has an empty directory.
		default:
			size, err := c.sizer.EncodedObjectSize(e.Hash)
			if err != nil {
				return cacheErr(fmt.Errorf("file %s: %w", p, err))
			}
			if over(size, c.lim.MaxFileBytes) {
				return limitErr(fmt.Sprintf("checkout of %s: file %s is %s", c.commit, p, humanSize(size)),
					"file size limit", c.lim.MaxFileBytes, FlagMaxFileSize)
			}
			if c.bytes += size; over(c.bytes, c.lim.MaxCheckoutBytes) {
				return limitErr(fmt.Sprintf("checkout of %s: the files add up to more than %s", c.commit, humanSize(c.lim.MaxCheckoutBytes)),
					"checkout size limit", c.lim.MaxCheckoutBytes, FlagMaxCheckoutSize)
			}
		}
	}
	return nil
}
