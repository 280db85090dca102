/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// remote.go: which references kustomize would fetch (isRemote, isFileURL),
// and the rules a kustomization read from a remote-base clone is held to.

package render

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
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

// isFileURL reports whether a remote reference is a file:// Git URL, which
// clones any repository on the controller's disk (another tenant's
// checkout among them).
func isFileURL(ref string) bool {
	l := strings.ToLower(strings.TrimSpace(ref))
	return strings.HasPrefix(strings.TrimPrefix(l, "git::"), "file://")
}

// checkRemoteKustomization holds a kustomization read from a remote-base
// clone (which no preflight saw) to the rules of the build: no file:// bases
// unless allowed, and no openapi field (ErrRemoteOpenAPI: the build would
// not know to put kustomize's process-wide default schema back).
func (s *sandboxFS) checkRemoteKustomization(cloneRoot, p string, data []byte) error {
	if !isKustomizationFile(p) {
		return nil
	}
	k, _, err := decodeKustomization(data)
	if err != nil {
		return nil // kustomize reports it
	}
	file := "remote base " + rel(cloneRoot, p)
	if len(k.OpenAPI) > 0 {
		return fmt.Errorf("%w (in %s)", ErrRemoteOpenAPI, file)
	}
	if s.allowFileURLs {
		return nil
	}
	for _, r := range refs(k) {
		if isRemote(r.value) && isFileURL(r.value) {
			return &refError{Field: r.field, Ref: r.value, File: file, Err: ErrFileURLRefused}
		}
	}
	return nil
}

func isKustomizationFile(p string) bool {
	base := filepath.Base(p)
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if base == n {
			return true
		}
	}
	return false
}
