package status

import (
	"fmt"
	"strings"
)

// SHAFromRevision extracts the commit SHA from a revision as the source
// controller stamps it: "<ref>@sha1:<hex>" or "sha1:<hex>" (40 lowercase hex
// digits; "sha256:" with 64 digits for SHA-256 repositories).
func SHAFromRevision(rev string) (string, error) {
	digest := rev
	if i := strings.LastIndexByte(rev, '@'); i >= 0 {
		digest = rev[i+1:]
	}
	algo, hex, ok := strings.Cut(digest, ":")
	if !ok {
		return "", fmt.Errorf("revision %q: want <ref>@sha1:<hex>", rev)
	}
	want := map[string]int{"sha1": 40, "sha256": 64}[algo]
	if want == 0 {
		return "", fmt.Errorf("revision %q: unknown digest algorithm %q", rev, algo)
	}
	if len(hex) != want || !isLowerHex(hex) {
		return "", fmt.Errorf("revision %q: %s digest must be %d lowercase hex digits", rev, algo, want)
	}
	return hex, nil
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
