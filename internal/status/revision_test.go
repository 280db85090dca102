package status

import (
	"strings"
	"testing"
)

const sha40 = "0123456789abcdef0123456789abcdef01234567"

func TestSHAFromRevision(t *testing.T) {
	sha256 := strings.Repeat("ab", 32)
	tests := []struct {
		rev, want string
		ok        bool
	}{
		{"main@sha1:" + sha40, sha40, true},
		{"sha1:" + sha40, sha40, true},
		{"refs/heads/feature@x@sha1:" + sha40, sha40, true},
		{"v1.2.3@sha1:" + sha40, sha40, true},
		{"main@sha256:" + sha256, sha256, true},
		{"", "", false},
		{"main", "", false},
		{sha40, "", false},
		{"main@" + sha40, "", false},
		{"main@sha1:" + sha40[:39], "", false},
		{"main@sha1:" + sha40 + "0", "", false},
		{"main@sha1:" + strings.ToUpper(sha40), "", false},
		{"main@md5:" + sha40, "", false},
		{"main@sha1:" + sha40 + "@x", "", false},
		{"main@sha1:0123456789abcdef0123456789abcdef0123456g", "", false},
	}
	for _, tt := range tests {
		got, err := SHAFromRevision(tt.rev)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("SHAFromRevision(%q) = %q, %v; want %q, ok=%v", tt.rev, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzSHAFromRevision(f *testing.F) {
	for _, seed := range []string{"main@sha1:" + sha40, "sha1:" + sha40, "a@b@sha1:" + sha40,
		"main@sha256:" + strings.Repeat("0", 64), "", "@", "sha1:", "main@sha1:xyz", ":::@@@"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		sha, err := SHAFromRevision(rev)
		if err != nil {
			return
		}
		if len(sha) != 40 && len(sha) != 64 {
			t.Fatalf("%q: sha %q has length %d", rev, sha, len(sha))
		}
		if !isLowerHex(sha) || !strings.HasSuffix(rev, ":"+sha) {
			t.Fatalf("%q: sha %q is not the revision's lowercase hex digest", rev, sha)
		}
	})
}
