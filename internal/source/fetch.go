/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// fetchRef is where the fetched ref lands in the cache repository.
const fetchRef = plumbing.ReferenceName("refs/bggitops/fetched")

// maxPacks bounds the packfiles a cache directory accumulates (one per
// fetch); past it the directory is cleared and fetched afresh, which for a
// shallow fetch costs about as much as an incremental one.
const maxPacks = 32

// Options of one Fetch.
type Options struct {
	URL  string
	Ref  v1alpha1.GitRepositoryRef
	Auth *Auth
	// Timeout bounds the whole Fetch (default v1alpha1.DefaultTimeout).
	Timeout time.Duration
	// Dir is the per-object cache directory; it survives reconciles.
	Dir string
	// LastRevision is status.artifact.revision. When the resolved revision
	// equals it and Dir holds the commit, nothing is fetched. More generally
	// any commit Dir already holds (a branch force-pushed back to a commit
	// fetched before) is checked out without fetching, so callers detect a
	// new revision by comparing Result.Revision, not by Result.Fetched.
	LastRevision string
}

// Result of a Fetch.
type Result struct {
	// Revision is <ref>@sha1:<hex> (sha1:<hex> for commit refs).
	Revision string
	// Commit is the hex SHA-1 checked out.
	Commit string
	// Dir is the worktree, checked out at Commit.
	Dir string
	// Fetched is false when no objects were downloaded (a no-op poll).
	Fetched bool
}

// Fetch resolves o.Ref with a remote listing and, unless Dir already holds
// the commit, fetches it shallowly into Dir; then checks it out. Errors are
// *Error values with messages safe to show.
func Fetch(ctx context.Context, o Options) (Result, error) {
	if o.Dir == "" {
		return Result{}, &Error{Reason: ReasonInvalidSpec, Message: "source: Options.Dir is empty"}
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = v1alpha1.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	refs, err := List(ctx, o)
	if err != nil {
		return Result{}, err
	}
	t, err := resolve(o.Ref, refs)
	if err != nil {
		return Result{}, refError(err)
	}
	return fetchTarget(ctx, o, t)
}

// List is `git ls-remote`: the remote's refs, annotated tags peeled.
func List(ctx context.Context, o Options) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	r := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{o.URL}})
	list, err := r.ListContext(ctx, &git.ListOptions{
		Auth:          o.Auth.method(),
		CABundle:      o.Auth.caBundle(),
		PeelingOption: git.AppendPeeled,
	})
	if err != nil {
		return nil, describe(err, o, "listing refs of")
	}
	return newRemoteRefs(list), nil
}

func fetchTarget(ctx context.Context, o Options, t target) (Result, error) {
	repo, err := openCache(o.Dir)
	if err != nil {
		return Result{}, err
	}
	res := Result{Dir: o.Dir}
	if !hasCommit(repo, t.commit) {
		if t, err = download(ctx, o, repo, t); err != nil {
			return Result{}, err
		}
		if repo, err = git.PlainOpen(o.Dir); err != nil { // download may have replaced it
			return Result{}, cacheErr(err)
		}
		res.Fetched = true
	}
	if err := checkout(repo, t.commit); err != nil {
		return Result{}, err
	}
	res.Revision, res.Commit = t.revision(), t.commit.String()
	return res, nil
}

// download fetches t into the cache. An overgrown cache is cleared first;
// a cache that gets in the way (corrupt, or a shallow boundary git cannot
// fetch past) is cleared and the fetch retried once. Transport, auth and
// ref errors are returned as they are: a new cache would not help.
func download(ctx context.Context, o Options, repo *git.Repository, t target) (target, error) {
	fresh := false
	if packCount(o.Dir) > maxPacks {
		var err error
		if repo, err = resetCache(o.Dir); err != nil {
			return t, err
		}
		fresh = true
	}
	got, err := fetchInto(ctx, o, repo, t)
	var fe *Error
	if err == nil || fresh || ctx.Err() != nil || (errors.As(err, &fe) && fe.Reason != ReasonGitFailed) {
		return got, err
	}
	if repo, err = resetCache(o.Dir); err != nil {
		return t, err
	}
	return fetchInto(ctx, o, repo, t)
}

func fetchInto(ctx context.Context, o Options, repo *git.Repository, t target) (target, error) {
	src := t.remoteRef.String()
	if t.remoteRef == "" {
		src = t.commit.String()
	}
	err := fetchSpecs(ctx, o, repo, 1, config.RefSpec("+"+src+":"+fetchRef.String()))
	if errors.Is(err, git.ErrExactSHA1NotSupported) {
		return fetchUnadvertisedCommit(ctx, o, t)
	}
	if err != nil {
		return t, describe(err, o, "fetching")
	}
	return landed(repo, t)
}

func fetchSpecs(ctx context.Context, o Options, repo *git.Repository, depth int, specs ...config.RefSpec) error {
	r := git.NewRemote(repo.Storer, &config.RemoteConfig{Name: "origin", URLs: []string{o.URL}})
	err := r.FetchContext(ctx, &git.FetchOptions{
		RefSpecs: specs,
		Depth:    depth,
		Auth:     o.Auth.method(),
		CABundle: o.Auth.caBundle(),
		Tags:     git.NoTags,
		Force:    true,
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

// landed reads what the fetch stored. The ref may have moved between the
// listing and the fetch; what was fetched wins, so the revision names a
// commit that is really on disk.
func landed(repo *git.Repository, t target) (target, error) {
	if t.remoteRef == "" {
		if !hasCommit(repo, t.commit) {
			return t, commitMissing(t)
		}
		return t, nil
	}
	ref, err := repo.Reference(fetchRef, true)
	if err != nil {
		return t, cacheErr(err)
	}
	h := ref.Hash()
	if tag, err := repo.TagObject(h); err == nil {
		c, err := tag.Commit()
		if err != nil {
			return t, &Error{Reason: ReasonInvalidRef, Message: fmt.Sprintf("tag %s does not point at a commit", t.revRef)}
		}
		h = c.Hash
	}
	t.commit = h
	return t, nil
}

// fetchUnadvertisedCommit handles a commit no ref points at on a server
// that refuses wants by hash: fetch every branch and tag in full into a
// fresh cache and look for it there. A commit ref never moves, so this
// happens once per object.
func fetchUnadvertisedCommit(ctx context.Context, o Options, t target) (target, error) {
	repo, err := resetCache(o.Dir)
	if err != nil {
		return t, err
	}
	err = fetchSpecs(ctx, o, repo, 0,
		"+refs/heads/*:refs/bggitops/heads/*", "+refs/tags/*:refs/bggitops/tags/*")
	if err != nil {
		return t, describe(err, o, "fetching")
	}
	if !hasCommit(repo, t.commit) {
		return t, commitMissing(t)
	}
	return t, nil
}

func commitMissing(t target) error {
	return &Error{Reason: ReasonRefNotFound, sentinel: ErrRefNotFound,
		Message: fmt.Sprintf("commit %s: %v on the remote (not reachable from any branch or tag)", t.commit, ErrRefNotFound)}
}

func hasCommit(repo *git.Repository, h plumbing.Hash) bool {
	_, err := repo.CommitObject(h)
	return err == nil
}

func checkout(repo *git.Repository, h plumbing.Hash) error {
	if head, err := repo.Head(); err == nil && head.Hash() == h {
		return nil
	}
	wt, err := repo.Worktree()
	if err != nil {
		return cacheErr(err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Hash: h, Force: true}); err != nil {
		return cacheErr(fmt.Errorf("checkout %s: %w", h, err))
	}
	return cacheErr(wt.Clean(&git.CleanOptions{Dir: true}))
}

func openCache(dir string) (*git.Repository, error) {
	repo, err := git.PlainOpen(dir)
	if err == nil {
		return repo, nil
	}
	return resetCache(dir)
}

// resetCache empties dir and initialises a repository there.
func resetCache(dir string) (*git.Repository, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, cacheErr(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, cacheErr(err)
	}
	repo, err := git.PlainInit(dir, false)
	return repo, cacheErr(err)
}

func packCount(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	return len(m)
}

func cacheErr(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Reason: ReasonGitFailed, Message: fmt.Sprintf("local cache: %v", err)}
}
