/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	"strings"
	"testing"
)

func TestParseRevision(t *testing.T) {
	sha1 := strings.Repeat("0123456789", 4)
	sha256 := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		rev, ref, sha, err string
	}{
		{rev: "main@sha1:" + sha1, ref: "main", sha: sha1},
		{rev: "v1.2.0@sha1:" + sha1, ref: "v1.2.0", sha: sha1},
		{rev: "sha1:" + sha1, sha: sha1},
		{rev: "refs/pull/7/head@sha1:" + sha1, ref: "refs/pull/7/head", sha: sha1},
		{rev: "feature@x@sha1:" + sha1, ref: "feature@x", sha: sha1},
		{rev: "main@sha256:" + sha256, ref: "main", sha: sha256},
		{rev: "sha256:" + sha256, sha: sha256},
		{rev: "main@sha1:" + sha1[:39], err: "40 lowercase hex digits"},
		{rev: "main@sha1:" + sha1 + "0", err: "40 lowercase hex digits"},
		{rev: "main@sha1:" + strings.ToUpper(sha1[:39]) + "A", err: "lowercase hex"},
		{rev: "main@sha1:0123456789abcdef0123456789abcdef0123456g", err: "lowercase hex"},
		{rev: "main@sha256:" + sha1, err: "64 lowercase hex digits"},
		{rev: "main@md5:" + sha1, err: "unknown digest algorithm"},
		{rev: "main@sha1:" + sha1 + "@x", err: "want <ref>@sha1:<hex>"},
		{rev: "main@" + sha1, err: "want <ref>@sha1:<hex>"},
		{rev: sha1, err: "want <ref>@sha1:<hex>"},
		{rev: "main", err: "want <ref>@sha1:<hex>"},
		{rev: "@sha1:" + sha1, err: "want <ref>@sha1:<hex>"},
		{rev: "", err: "want"},
	} {
		ref, sha, err := ParseRevision(tc.rev)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRevision(%q) = %q, %q, %v; want error %q", tc.rev, ref, sha, err, tc.err)
			}
			continue
		}
		if err != nil || ref != tc.ref || sha != tc.sha {
			t.Errorf("ParseRevision(%q) = %q, %q, %v; want %q, %q", tc.rev, ref, sha, err, tc.ref, tc.sha)
		}
		if got := FormatRevision(ref, sha); got != tc.rev {
			t.Errorf("FormatRevision(%q, %q) = %q, want %q", ref, sha, got, tc.rev)
		}
	}
}

func TestShortSHA(t *testing.T) {
	sha := strings.Repeat("0123456789", 4)
	if got := ShortSHA(sha); got != sha[:ShortSHALength] {
		t.Errorf("ShortSHA = %q", got)
	}
	if got := ShortSHA("abc"); got != "abc" {
		t.Errorf("ShortSHA(abc) = %q", got)
	}
}

// FuzzParseRevision: whatever parses has a hash of its algorithm's length
// and formats back to the same string.
func FuzzParseRevision(f *testing.F) {
	sha := strings.Repeat("0123456789", 4)
	for _, s := range []string{"main@sha1:" + sha, "sha1:" + sha, "refs/pull/7/head@sha1:" + sha, "a@b@sha1:" + sha,
		"main@sha256:" + sha + sha[:24], "@sha1:", "sha1:", "x@sha1:zz", "main@md5:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		ref, sha, err := ParseRevision(rev)
		if err != nil {
			return
		}
		if len(sha) != 40 && len(sha) != 64 || !isLowerHex(sha) {
			t.Fatalf("%q: sha %q", rev, sha)
		}
		if got := FormatRevision(ref, sha); got != rev {
			t.Fatalf("round trip %q -> %q", rev, got)
		}
	})
}
