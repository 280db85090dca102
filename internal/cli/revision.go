/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Git revisions as the commands take them (--for-revision, --to) and print them.

package cli

import (
	"fmt"
	"regexp"
	"strings"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/render"
)

// shaPrefix is an abbreviated or full commit hash.
var shaPrefix = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// commitRef is the commit a wait is for: a hash, or a prefix of one.
type commitRef string

// resolveRevision turns --for-revision into a commit: a hash (7 digits or
// more), a revision as the status spells it (main@sha1:<hex>), or a ref of
// the local repository repoDir (HEAD, a branch, a tag).
func resolveRevision(arg, repoDir string) (commitRef, error) {
	switch {
	case arg == "":
		return "", fmt.Errorf("--for-revision is required: a commit hash, HEAD or a ref of the local repository")
	case shaPrefix.MatchString(arg):
		return commitRef(arg), nil
	case strings.Contains(arg, ":"):
		_, sha, err := v1alpha1.ParseRevision(arg)
		if err != nil {
			return "", err
		}
		return commitRef(sha), nil
	}
	sha, err := render.ResolveSHA(repoDir, arg)
	if err != nil {
		return "", fmt.Errorf("--for-revision %s: %w (pass --repo, or a commit hash)", arg, err)
	}
	return commitRef(sha), nil
}

// in reports whether rev (a status revision, <ref>@sha1:<hex>) is this
// commit.
func (c commitRef) in(rev string) bool {
	if rev == "" {
		return false
	}
	sha := rev
	if _, s, err := v1alpha1.ParseRevision(rev); err == nil {
		sha = s
	}
	return strings.HasPrefix(sha, string(c))
}

// inAny reports whether any of revs is this commit.
func (c commitRef) inAny(revs []string) bool {
	for _, r := range revs {
		if c.in(r) {
			return true
		}
	}
	return false
}

func (c commitRef) String() string { return v1alpha1.ShortSHA(string(c)) }

// shortRevision shortens a status revision for a progress line.
func shortRevision(rev string) string {
	if _, sha, err := v1alpha1.ParseRevision(rev); err == nil {
		return v1alpha1.ShortSHA(sha)
	}
	return orNone(rev)
}
