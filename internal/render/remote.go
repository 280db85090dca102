/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"regexp"
	"strings"
)

// scpUser matches the "user@" of an scp-style Git URL (git@github.com:o/r).
var scpUser = regexp.MustCompile(`^[a-z][a-z0-9-]*@`)

// isRemote reports whether kustomize would fetch ref over the network: it
// mirrors kustomize's own URL detection (api/internal/git/repospec.go and
// loader.IsRemoteFile), erring on the side of "remote" for anything with a
// scheme, so a remote base can never slip past the sandbox as a local path.
func isRemote(ref string) bool {
	l := strings.ToLower(strings.TrimSpace(ref))
	l = strings.TrimPrefix(l, "git::")
	switch {
	case strings.Contains(l, "://"):
		return true
	case scpUser.MatchString(l):
		return true
	case strings.HasPrefix(l, "github.com/"), strings.HasPrefix(l, "github.com:"):
		return true
	}
	return false
}
