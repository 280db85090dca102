package source

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sha = strings.Repeat("0123456789", 4)

func TestParseRevision(t *testing.T) {
	for _, tc := range []struct {
		rev, ref, sha, err string
	}{
		{rev: "main@sha1:" + sha, ref: "main", sha: sha},
		{rev: "v1.2.0@sha1:" + sha, ref: "v1.2.0", sha: sha},
		{rev: "sha1:" + sha, sha: sha},
		{rev: "refs/pull/7/head@sha1:" + sha, ref: "refs/pull/7/head", sha: sha},
		{rev: "feature@x@sha1:" + sha, ref: "feature@x", sha: sha},
		{rev: "main@sha1:" + sha[:39], err: "40 hex digits"},
		{rev: "main@sha1:" + strings.ToUpper(sha[:39]) + "A", err: "lowercase hex"},
		{rev: "main", err: "want <ref>@sha1:<hex>"},
		{rev: "@sha1:" + sha, err: "want <ref>@sha1:<hex>"},
		{rev: "", err: "want"},
	} {
		ref, s, err := ParseRevision(tc.rev)
		if tc.err != "" {
			require.Error(t, err, tc.rev)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err, tc.rev)
		assert.Equal(t, tc.ref, ref)
		assert.Equal(t, tc.sha, s)
		assert.Equal(t, tc.rev, FormatRevision(ref, s))
	}
}

func FuzzParseRevision(f *testing.F) {
	for _, s := range []string{"main@sha1:" + sha, "sha1:" + sha, "refs/pull/7/head@sha1:" + sha, "a@b@sha1:" + sha, "@sha1:", "sha1:", "x@sha1:zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		ref, s, err := ParseRevision(rev)
		if err != nil {
			return
		}
		if len(s) != 40 {
			t.Fatalf("%q: sha %q", rev, s)
		}
		if got := FormatRevision(ref, s); got != rev {
			t.Fatalf("round trip %q -> %q", rev, got)
		}
	})
}
