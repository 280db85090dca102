/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// errors.go: the errors of a build — the sentinels (ErrLeavesRepository,
// ErrRemoteRefused, ...), BuildError and PathError — and URL credentials
// hidden from messages.

package render

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Sentinel errors, for callers that classify build failures (all of them are
// terminal for a given revision: only a new commit can fix them).
var (
	// ErrLeavesRepository: a path or symlink points outside the repository.
	ErrLeavesRepository = errors.New("leaves the repository")
	// ErrAbsolutePath: a kustomization names an absolute path.
	ErrAbsolutePath = errors.New("absolute paths are not allowed")
	// ErrRemoteRefused: a remote base or resource while remote bases are off.
	ErrRemoteRefused = errors.New("remote bases are disabled (--allow-remote-bases)")
	// ErrFileURLRefused: a file:// remote base (it would clone any
	// repository on the controller's disk) without Options.AllowFileURLs.
	ErrFileURLRefused = errors.New("file:// remote bases are disabled (--allow-file-urls)")
	// ErrRemoteOpenAPI: a remote base sets kustomize's OpenAPI schema; only
	// kustomizations in the repository may. The schema is process-wide and
	// outlives the build unless the build puts the default back, which it
	// does when the preflight saw an openapi field; the preflight never
	// sees a remote base.
	ErrRemoteOpenAPI = errors.New("an openapi field in a remote base is not supported; set it in the repository's kustomization")
	// ErrNotFound: a kustomization names a file or directory that does not exist.
	ErrNotFound = errors.New("does not exist")
	// ErrDuplicateObject: two rendered objects share an identity.
	ErrDuplicateObject = errors.New("duplicate object")
	// ErrHelmRefused: a kustomization inflates Helm charts, which would run
	// the helm binary.
	ErrHelmRefused = errors.New("helm charts are not supported; render the chart into the repository")
	// ErrReadOnly: kustomize tried to write into the repository.
	ErrReadOnly = errors.New("the repository is read-only during a build")
	// ErrNoGit: a remote git base while no git program is on the path
	// (the controller's image ships none).
	ErrNoGit = errors.New("remote git bases need a git program, which the controller's image does not ship; " +
		"copy the base into the repository, or refer to its files by HTTPS URL")
)

// BuildError is the error of one build: the path built and the cause, with
// the sandbox root stripped from messages so they show repository paths.
type BuildError struct {
	Path string
	Err  error
	root []string
}

func (e *BuildError) Error() string {
	msg := e.Err.Error()
	for _, r := range e.root {
		if r == "" || r == "/" {
			continue
		}
		msg = strings.ReplaceAll(msg, r+"/", "")
		msg = strings.ReplaceAll(msg, r, ".")
	}
	return fmt.Sprintf("kustomize build %s: %s", e.Path, msg)
}

func (e *BuildError) Unwrap() error { return e.Err }

// PathError reports a path, or a symlink on the way to it, that leaves the
// repository.
type PathError struct {
	Path   string // the path as requested
	Link   string // the symlink that leads out, if any (repository-relative)
	Target string // that symlink's target
}

func (e *PathError) Error() string {
	if e.Link != "" {
		return fmt.Sprintf("symlink %s -> %s %s", e.Link, e.Target, ErrLeavesRepository)
	}
	return fmt.Sprintf("%s %s", e.Path, ErrLeavesRepository)
}

func (e *PathError) Unwrap() error { return ErrLeavesRepository }

// refError names the kustomization field, entry and file a problem comes from.
type refError struct {
	Field string // "resource", "patch", ...
	Ref   string // the entry as written
	File  string // the kustomization file, repository-relative
	Err   error
}

func (e *refError) Error() string {
	var pe *PathError
	switch {
	case errors.As(e.Err, &pe) && pe.Link == "":
		return fmt.Sprintf("%s %s %s (in %s)", e.Field, redact(e.Ref), ErrLeavesRepository, e.File)
	}
	return fmt.Sprintf("%s %s: %v (in %s)", e.Field, redact(e.Ref), e.Err, e.File)
}

var userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@`)

// redact hides the credentials of a URL (https://user:token@host/...): an
// error reaches conditions, events and commit statuses.
func redact(s string) string {
	return userinfo.ReplaceAllString(s, "${1}***@")
}

func (e *refError) Unwrap() error { return e.Err }
