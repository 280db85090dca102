/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// revision.go: the revision string <ref>@<algo>:<hex> — FormatRevision,
// ParseRevision, CheckSHA and ShortSHA.

package v1alpha1

import (
	"fmt"
	"strings"
)

// A revision (status.lastAppliedRevision, the bggitops.dev/revision
// annotation) names a commit as "<ref>@<algo>:<hex>", or "<algo>:<hex>" when
// the ref is a bare commit. algo is sha1 (40 lowercase hex digits) or sha256
// (64, for SHA-256 repositories).

// digestLengths maps each digest algorithm of a revision to its hex length.
var digestLengths = map[string]int{"sha1": 40, "sha256": 64}

// ShortSHALength is how many hex digits of a commit a message shows.
const ShortSHALength = 12

// FormatRevision returns the revision of commit sha reached through ref; the
// algorithm follows from the length of sha.
func FormatRevision(ref, sha string) string {
	algo := "sha1"
	if len(sha) == digestLengths["sha256"] {
		algo = "sha256"
	}
	if ref == "" {
		return algo + ":" + sha
	}
	return ref + "@" + algo + ":" + sha
}

// ParseRevision is the inverse of FormatRevision. A ref may itself contain
// "@"; a digest cannot, so the last "@" separates them.
func ParseRevision(rev string) (ref, sha string, err error) {
	digest := rev
	if i := strings.LastIndexByte(rev, '@'); i >= 0 {
		ref, digest = rev[:i], rev[i+1:]
		if ref == "" {
			return "", "", fmt.Errorf("revision %q: want <ref>@sha1:<hex> or sha1:<hex>", rev)
		}
	}
	algo, hex, ok := strings.Cut(digest, ":")
	if !ok {
		return "", "", fmt.Errorf("revision %q: want <ref>@sha1:<hex> or sha1:<hex>", rev)
	}
	if err := CheckSHA(algo, hex); err != nil {
		return "", "", fmt.Errorf("revision %q: %w", rev, err)
	}
	return ref, hex, nil
}

// CheckSHA checks that hex is a full commit hash of algo (sha1 or sha256).
func CheckSHA(algo, hex string) error {
	want := digestLengths[algo]
	if want == 0 {
		return fmt.Errorf("unknown digest algorithm %q", algo)
	}
	if len(hex) != want || !isLowerHex(hex) {
		return fmt.Errorf("the %s hash must be %d lowercase hex digits", algo, want)
	}
	return nil
}

// ShortSHA abbreviates a commit hash for messages.
func ShortSHA(sha string) string {
	if len(sha) > ShortSHALength {
		return sha[:ShortSHALength]
	}
	return sha
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
