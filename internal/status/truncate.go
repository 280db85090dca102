/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// truncate.go: Truncate, a description shortened to its forge's limit.

package status

import "unicode/utf8"

// Description limits in characters. GitHub rejects longer descriptions
// with 422 "description is too long (maximum is 140 characters)". GitLab
// documents no limit for description (its target_url is limited to 255);
// 255 keeps us clear of its string columns. Gitea stores TEXT with no API
// limit; 1000 bounds what we store and show.
var descriptionLimits = map[string]int{
	ProviderGitHub: 140,
	ProviderGitLab: 255,
	ProviderGitea:  1000,
}

// Truncate shortens desc to the provider's description limit, ending a
// shortened text with "…". It is idempotent, so a truncated description
// compares equal to what the forge stored. Unknown providers get 140.
func Truncate(desc string, provider string) string {
	limit, ok := descriptionLimits[provider]
	if !ok {
		limit = 140
	}
	// Invalid UTF-8 becomes U+FFFD byte by byte, as encoding/json sends it,
	// so the description compares equal to the one read back.
	return truncateRunes(string([]rune(desc)), limit)
}

func truncateRunes(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	out := make([]rune, 0, limit)
	for _, r := range s {
		if len(out) == limit-1 {
			break
		}
		out = append(out, r)
	}
	return string(out) + "…"
}
