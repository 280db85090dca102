package source

import (
	"errors"
	"fmt"
	"strings"
)

// sha1Sep separates the ref from the hash in a revision string.
const sha1Sep = "@sha1:"

// FormatRevision returns "<ref>@sha1:<hex>", or "sha1:<hex>" when ref is empty
// (a commit ref has no name worth keeping).
func FormatRevision(ref, sha string) string {
	if ref == "" {
		return "sha1:" + sha
	}
	return ref + sha1Sep + sha
}

// ParseRevision is the inverse of FormatRevision. The ref may itself contain
// "@", so the last separator wins.
func ParseRevision(rev string) (ref, sha string, err error) {
	switch {
	case strings.HasPrefix(rev, "sha1:"):
		sha = rev[len("sha1:"):]
	default:
		i := strings.LastIndex(rev, sha1Sep)
		if i <= 0 {
			return "", "", fmt.Errorf("revision %q: want <ref>@sha1:<hex> or sha1:<hex>", rev)
		}
		ref, sha = rev[:i], rev[i+len(sha1Sep):]
	}
	if err := checkSHA1(sha); err != nil {
		return "", "", fmt.Errorf("revision %q: %w", rev, err)
	}
	return ref, sha, nil
}

func checkSHA1(s string) error {
	if len(s) != 40 {
		return errors.New("the hash must be 40 hex digits")
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return errors.New("the hash must be lowercase hex")
		}
	}
	return nil
}
