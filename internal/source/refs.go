/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// refs.go: resolving spec.ref (branch, tag, semver, commit, name) against a
// remote listing, and Target, a resolved ref a later Fetch takes as it is.

package source

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/go-git/go-git/v5/plumbing"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// ErrRefNotFound is returned (wrapped) when the remote has no ref matching
// spec.ref.
var ErrRefNotFound = errors.New("ref not found")

const peeledSuffix = "^{}"

// target is a ref resolved against a remote listing.
type target struct {
	// remoteRef is the ref to fetch; empty for a commit that no listed ref
	// points at (fetched by hash).
	remoteRef plumbing.ReferenceName
	// commit is the commit to check out (annotated tags already peeled).
	commit plumbing.Hash
	// revRef is the <ref> part of the revision string; empty for commits.
	revRef string
}

func (t target) revision() string { return v1alpha1.FormatRevision(t.revRef, t.commit.String()) }

// Target is a ref as a listing resolved it (Poll), for a Fetch that
// follows to take as it is (Options.Target) without listing again.
type Target struct {
	RemoteRef, RevRef, Commit string
	// Listing is the listing it was resolved from (HTTP(S), when small):
	// the Fetch answers its own listing from it.
	Listing *Listing `json:",omitempty"`
}

func (t target) export() *Target {
	return &Target{RemoteRef: string(t.remoteRef), RevRef: t.revRef, Commit: t.commit.String()}
}

func (t *Target) internal() target {
	return target{remoteRef: plumbing.ReferenceName(t.RemoteRef), revRef: t.RevRef, commit: plumbing.NewHash(t.Commit)}
}

// remoteRefs is a remote listing: ref name to the commit it designates,
// with annotated tags replaced by the commit they point at.
type remoteRefs map[plumbing.ReferenceName]plumbing.Hash

func newRemoteRefs(list []*plumbing.Reference) remoteRefs {
	m := remoteRefs{}
	for _, r := range list {
		if r.Type() != plumbing.HashReference {
			continue
		}
		name := r.Name().String()
		if strings.HasSuffix(name, peeledSuffix) {
			continue
		}
		m[r.Name()] = r.Hash()
	}
	// Peeled entries ("refs/tags/v1^{}") win over the tag object's hash.
	for _, r := range list {
		if name := r.Name().String(); strings.HasSuffix(name, peeledSuffix) {
			m[plumbing.ReferenceName(strings.TrimSuffix(name, peeledSuffix))] = r.Hash()
		}
	}
	return m
}

// resolve picks the ref of spec.ref from a remote listing.
func resolve(ref v1alpha1.GitRepositoryRef, refs remoteRefs) (target, error) {
	switch {
	case ref.Commit != "":
		return resolveCommit(ref.Commit, refs)
	case ref.SemVer != "":
		return resolveSemver(ref.SemVer, refs)
	case ref.Tag != "":
		return resolveName(plumbing.NewTagReferenceName(ref.Tag), ref.Tag, "tag", refs)
	case ref.Name != "":
		return resolveName(plumbing.ReferenceName(ref.Name), ref.Name, "ref", refs)
	default:
		b := ref.Branch
		if b == "" {
			b = v1alpha1.DefaultBranch
		}
		return resolveName(plumbing.NewBranchReferenceName(b), b, "branch", refs)
	}
}

func resolveName(name plumbing.ReferenceName, short, kind string, refs remoteRefs) (target, error) {
	h, ok := refs[name]
	if !ok {
		return target{}, fmt.Errorf("%s %q: %w on the remote", kind, short, ErrRefNotFound)
	}
	return target{remoteRef: name, commit: h, revRef: short}, nil
}

func resolveSemver(rng string, refs remoteRefs) (target, error) {
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return target{}, fmt.Errorf("semver range %q is malformed: %v", rng, err)
	}
	var best *semver.Version
	var bestTag string
	for _, tag := range sortedTags(refs) {
		v, err := semver.NewVersion(tag)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestTag = v, tag
		}
	}
	if best == nil {
		return target{}, fmt.Errorf("no tag matches the semver range %q: %w", rng, ErrRefNotFound)
	}
	return resolveName(plumbing.NewTagReferenceName(bestTag), bestTag, "tag", refs)
}

// sortedTags lists tag names in order, so ties (v1.0.0 and 1.0.0) resolve
// the same way on every poll.
func sortedTags(refs remoteRefs) []string {
	var tags []string
	for name := range refs {
		if name.IsTag() {
			tags = append(tags, name.Short())
		}
	}
	sort.Strings(tags)
	return tags
}

// resolveCommit prefers a listed ref that points at the commit, since any
// server can serve a ref tip; otherwise the commit is fetched by hash.
func resolveCommit(sha string, refs remoteRefs) (target, error) {
	if err := v1alpha1.CheckSHA("sha1", sha); err != nil {
		return target{}, fmt.Errorf("commit %q: %w", sha, err)
	}
	h := plumbing.NewHash(sha)
	var names []string
	for name, hash := range refs {
		if hash == h && (name.IsBranch() || name.IsTag()) {
			names = append(names, name.String())
		}
	}
	sort.Strings(names) // refs/heads/ sorts before refs/tags/
	t := target{commit: h}
	if len(names) > 0 {
		t.remoteRef = plumbing.ReferenceName(names[0])
	}
	return t, nil
}
