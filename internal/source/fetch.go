/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// fetch.go: Fetch, Poll and List — resolving a ref with a remote listing,
// fetching its commit shallowly into the cache directory, and checking it
// out.

package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// fetchRef is where the fetched ref lands in the cache repository.
const fetchRef = plumbing.ReferenceName("refs/bggitops/fetched")

// maxPacks bounds the packfiles a cache directory accumulates (one per
// fetch); past it the directory is cleared and fetched afresh, which for a
// shallow fetch costs about as much as an incremental one.
const maxPacks = 32

// Storage of a cache repository: go-git's defaults keep up to 96 MiB of
// decoded objects and read every packed object whole; a checkout needs
// neither, and blobs above largeObject are streamed from the pack.
const (
	objectCacheBytes = 8 << 20
	largeObject      = 1 << 20
)

// Options of one Fetch.
type Options struct {
	URL  string
	Ref  v1alpha1.GitRepositoryRef
	Auth *Auth
	// Timeout bounds the whole Fetch: listing, download, unpacking and
	// checkout (default v1alpha1.DefaultTimeout).
	Timeout time.Duration
	// Limits bound the download, the memory and the checkout; zero fields
	// take their defaults.
	Limits Limits
	// AllowFileURLs allows file:// URLs (--allow-file-urls); see checkURL.
	AllowFileURLs bool
	// AllowInsecureHTTP allows http:// URLs with credentials
	// (--allow-insecure-http); see checkURL.
	AllowInsecureHTTP bool
	// Dir is the per-object cache directory; it survives reconciles.
	Dir string
	// Target, when set, is what the ref resolved to in a Poll just made:
	// the Fetch takes it as it is, without listing the refs again.
	Target *Target
	// Resolved, when set, is called with the revision the ref resolved to
	// before anything is downloaded or checked out; an error it returns
	// ends the Fetch as it is.
	Resolved func(revision string) error
	// LastRevision is status.artifact.revision. When the resolved revision
	// equals it and Dir holds the commit, nothing is fetched. More generally
	// any commit Dir already holds (a branch force-pushed back to a commit
	// fetched before) is checked out without fetching, so callers detect a
	// new revision by comparing Result.Revision, not by Result.Fetched.
	LastRevision string
	// CheckedOut is the commit the caller knows Dir holds checked out
	// (Cache.CheckedOut), "" when it does not know. When set, Poll trusts
	// it and does not open Dir: a poll of an unchanged ref reads nothing
	// on disk.
	CheckedOut string
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
	// Target is what the ref resolved to (set by Poll).
	Target *Target `json:",omitempty"`
}

// Fetch resolves o.Ref with a remote listing and, unless Dir already holds
// the commit, fetches it shallowly into Dir; then checks it out. Errors are
// *Error values with messages safe to show.
func Fetch(ctx context.Context, o Options) (Result, error) {
	if o.Dir == "" {
		return Result{}, &Error{Reason: ReasonInvalidSpec, Message: "source: Options.Dir is empty"}
	}
	if err := checkURL(o); err != nil {
		return Result{}, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = v1alpha1.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx, hf, done, err := withHTTPLimits(ctx, o)
	if err != nil {
		return Result{}, err
	}
	defer done()
	res, err := fetch(ctx, o)
	return res, hf.cause(err)
}

// Poll resolves o.Ref with a remote listing and reports whether Dir holds
// its commit checked out already, as o.LastRevision: then res is that
// checkout and nothing is left to fetch. A poll of an unchanged ref costs
// one listing and no more (the controller makes it in its own process,
// and runs a Fetch in a worker only for a change).
func Poll(ctx context.Context, o Options) (res Result, unchanged bool, err error) {
	if o.Dir == "" {
		return Result{}, false, &Error{Reason: ReasonInvalidSpec, Message: "source: Options.Dir is empty"}
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = v1alpha1.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx, hf, done, err := withHTTPLimits(ctx, o)
	if err != nil {
		return Result{}, false, err
	}
	defer done()
	refs, err := List(ctx, o)
	if err != nil {
		return Result{}, false, err
	}
	t, err := resolve(o.Ref, refs)
	if err != nil {
		return Result{}, false, refError(err)
	}
	res = Result{Revision: t.revision(), Commit: t.commit.String(), Dir: o.Dir, Target: t.export()}
	res.Target.Listing = hf.carried()
	return res, res.Revision == o.LastRevision && holds(o, t.commit), nil
}

// holds reports whether o.Dir holds commit h checked out: as the caller
// remembers it, else as the directory says.
func holds(o Options, h plumbing.Hash) bool {
	if o.CheckedOut != "" {
		return o.CheckedOut == h.String()
	}
	return checkedOutAt(o.Dir, h)
}

// checkedOutAt reports whether the cache in dir holds commit h checked out
// whole.
// Holds reports whether o.Dir holds commit (hex) checked out: as the
// caller remembers it (o.CheckedOut), else as the directory says.
func Holds(o Options, commit string) bool {
	return commit != "" && holds(o, plumbing.NewHash(commit))
}

func checkedOutAt(dir string, h plumbing.Hash) bool {
	repo, err := openRepo(dir)
	if err != nil {
		return false
	}
	ref, err := repo.Reference(checkedOut, false)
	return err == nil && ref.Hash() == h
}

func fetch(ctx context.Context, o Options) (Result, error) {
	t, err := targetOf(ctx, o)
	if err != nil {
		return Result{}, err
	}
	if o.Resolved != nil {
		if err := o.Resolved(t.revision()); err != nil {
			return Result{}, err
		}
	}
	return fetchTarget(ctx, o, t)
}

// targetOf is o.Target, else what a listing resolves o.Ref to.
func targetOf(ctx context.Context, o Options) (target, error) {
	if o.Target != nil {
		return o.Target.internal(), nil
	}
	refs, err := List(ctx, o)
	if err != nil {
		return target{}, err
	}
	t, err := resolve(o.Ref, refs)
	if err != nil {
		return target{}, refError(err)
	}
	return t, nil
}

// List is `git ls-remote`: the remote's refs, annotated tags peeled.
// The URL policy of o applies.
func List(ctx context.Context, o Options) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	if err := checkURL(o); err != nil {
		return nil, err
	}
	ctx, hf, done, err := withHTTPLimits(ctx, o)
	if err != nil {
		return nil, err
	}
	defer done()
	r := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{o.URL}})
	list, err := r.ListContext(ctx, &git.ListOptions{
		Auth:          o.Auth.method(),
		PeelingOption: git.AppendPeeled,
	})
	if err != nil {
		return nil, hf.cause(describe(err, o, "listing refs of"))
	}
	return newRemoteRefs(list), nil
}

// RefNames is a listing as ref name → commit, both as strings.
func RefNames(refs map[plumbing.ReferenceName]plumbing.Hash) map[string]string {
	names := make(map[string]string, len(refs))
	for name, hash := range refs {
		names[name.String()] = hash.String()
	}
	return names
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
		if repo, err = openRepo(o.Dir); err != nil { // download may have replaced it
			return Result{}, cacheErr(err)
		}
		res.Fetched = true
	}
	if err := ctx.Err(); err != nil {
		return Result{}, describe(err, o, "fetching")
	}
	if err := checkout(repo, t.commit, o.Limits.effective()); err != nil {
		return Result{}, err
	}
	res.Revision, res.Commit = t.revision(), t.commit.String()
	return res, nil
}

// download fetches t into the cache. An overgrown cache (more than
// maxPacks packs, or more than a fetch's worth of pack bytes) is cleared
// first, so a cache directory never holds more than two fetches' worth;
// a cache that gets in the way (corrupt, or a shallow boundary git cannot
// fetch past) is cleared and the fetch retried once. Transport, auth and
// ref errors are returned as they are: a new cache would not help.
func download(ctx context.Context, o Options, repo *git.Repository, t target) (target, error) {
	removeStaged(o.Dir)
	fresh := false
	if n, size := packs(o.Dir); n > maxPacks || over(size, o.Limits.effective().MaxFetchBytes) {
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
	s := &boundedStorer{Storer: repo.Storer, dir: filepath.Join(o.Dir, git.GitDirName), ctx: ctx,
		lim: o.Limits.effective(), remote: scrubURLs(o.URL)}
	r := git.NewRemote(s, &config.RemoteConfig{Name: "origin", URLs: []string{o.URL}})
	err := r.FetchContext(ctx, &git.FetchOptions{
		RefSpecs: specs,
		Depth:    depth,
		Auth:     o.Auth.method(), // the CA bundle is applied by withHTTPLimits
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

func openCache(dir string) (*git.Repository, error) {
	repo, err := openRepo(dir)
	if err == nil {
		return repo, nil
	}
	return resetCache(dir)
}

// openRepo opens the cache repository in dir (worktree dir, .git inside)
// with storage bounded for memory (see objectCacheBytes).
func openRepo(dir string) (*git.Repository, error) {
	wt := osfs.New(dir)
	dot, err := wt.Chroot(git.GitDirName)
	if err != nil {
		return nil, err
	}
	s := filesystem.NewStorageWithOptions(dot, cache.NewObjectLRU(objectCacheBytes),
		filesystem.Options{LargeObjectThreshold: largeObject})
	return git.Open(s, wt)
}

// resetCache empties dir and initialises a repository there.
func resetCache(dir string) (*git.Repository, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, cacheErr(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, cacheErr(err)
	}
	if _, err := git.PlainInit(dir, false); err != nil {
		return nil, cacheErr(err)
	}
	repo, err := openRepo(dir)
	return repo, cacheErr(err)
}

// removeStaged removes what an interrupted fetch into dir left behind
// (the process was killed): staged incoming packs and go-git's temporary
// pack files. Fetches into one directory never overlap (one reconcile per
// object at a time), so whatever is there is stale.
func removeStaged(dir string) {
	for _, pattern := range []string{filepath.Join(dir, ".git", "incoming-*.pack"), filepath.Join(dir, ".git", "objects", "pack", "tmp_*")} {
		m, _ := filepath.Glob(pattern)
		for _, p := range m {
			_ = os.Remove(p)
		}
	}
}

// packs counts the packfiles of the cache in dir and their bytes.
func packs(dir string) (n int, size int64) {
	m, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	return len(m), size
}

func cacheErr(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Reason: ReasonGitFailed, Message: fmt.Sprintf("local cache: %v", err)}
}
