/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// protocol.go: what crosses the process boundary — Arg, request, frames of
// the answer, and errors as they travel (wireError).

package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
)

// Arg is the one argument that makes the binary a worker.
const Arg = "__bg-gitops-render-worker"

// request is what the parent sends on the worker's stdin: one build or
// one fetch, and the worker's own limits (the same for every request a
// worker serves).
type request struct {
	Build *buildRequest `json:",omitempty"`
	Fetch *fetchRequest `json:",omitempty"`
	// MaxMemory (bytes), MaxCPU (seconds), MaxStack (bytes) are the
	// worker's own limits; MaxFileSize (bytes) the largest file it may
	// write, none when negative.
	MaxMemory, MaxCPU, MaxStack, MaxFileSize int64
}

// buildRequest is one render.BuildContext.
type buildRequest struct {
	Root, Path       string
	AllowRemoteBases bool
	AllowFileURLs    bool
	Revision, Source string
	Limits           render.Limits
}

// fetchRequest is one source.Fetch; the worker makes its Auth from the
// Secret's data (nil without a secretRef).
type fetchRequest struct {
	URL               string
	Ref               v1alpha1.GitRepositoryRef
	Timeout           time.Duration
	Limits            source.Limits
	AllowFileURLs     bool
	AllowInsecureHTTP bool
	Dir, LastRevision string
	Target            *source.Target    `json:",omitempty"`
	Secret            map[string][]byte `json:",omitempty"`
	SecretName        string            `json:",omitempty"`
	// Skip is a revision not to fetch: the worker answers Skipped when
	// the ref resolves to it, before downloading anything.
	Skip string `json:",omitempty"`
	// ListOnly asks for the remote's refs (source.List), nothing fetched.
	ListOnly bool `json:",omitempty"`
}

// frame is one JSON value a worker writes on its stdout: the revision a
// fetch resolved to, as soon as it is known (so that a worker that dies
// while downloading still tells it), then the answer.
type frame struct {
	Resolved string    `json:",omitempty"`
	Answer   *response `json:",omitempty"`
}

// response is the worker's answer.
type response struct {
	Objects []json.RawMessage `json:",omitempty"`
	Error   *wireError        `json:",omitempty"`
	Fetched *source.Result    `json:",omitempty"`
	Skipped bool              `json:",omitempty"`
	// Refs answers a ListOnly fetch: ref name → commit.
	Refs map[string]string `json:",omitempty"`
}

// wireError is a build error as it crosses the process boundary: its
// message, the sentinel it wraps (by name) and the limit it hit.
type wireError struct {
	Message  string
	Sentinel string             `json:",omitempty"`
	Limit    *render.LimitError `json:",omitempty"`
	// Reason is a fetch error's source.Error reason.
	Reason string `json:",omitempty"`
}

// sentinels are the errors callers classify, by a stable name.
var sentinels = map[string]error{
	"leaves-repository": render.ErrLeavesRepository,
	"absolute-path":     render.ErrAbsolutePath,
	"remote-refused":    render.ErrRemoteRefused,
	"file-url-refused":  render.ErrFileURLRefused,
	"remote-openapi":    render.ErrRemoteOpenAPI,
	"not-found":         render.ErrNotFound,
	"duplicate-object":  render.ErrDuplicateObject,
	"helm-refused":      render.ErrHelmRefused,
	"read-only":         render.ErrReadOnly,
	"no-git":            render.ErrNoGit,
	"limit-exceeded":    render.ErrLimitExceeded,
	// source's.
	"ref-not-found":      source.ErrRefNotFound,
	"git-limit-exceeded": source.ErrLimitExceeded,
	"url-not-allowed":    source.ErrURLNotAllowed,
}

func toWire(err error) *wireError {
	w := &wireError{Message: err.Error()}
	for name, s := range sentinels {
		if s != render.ErrLimitExceeded && errors.Is(err, s) {
			w.Sentinel = name
		}
	}
	var le *render.LimitError
	if errors.As(err, &le) {
		w.Limit = le
	}
	var se *source.Error
	if errors.As(err, &se) {
		w.Reason = se.Reason
	}
	return w
}

// fetchFromWire is a worker's fetch error in the parent, a *source.Error
// as the worker's was.
func fetchFromWire(w *wireError) error {
	reason := w.Reason
	if reason == "" {
		reason = source.ReasonGitFailed
	}
	return source.NewError(reason, w.Message, sentinels[w.Sentinel])
}

// buildError is a worker's build error in the parent: the message as the
// worker wrote it, matching errors.Is and errors.As as the original did.
type buildError struct {
	msg  string
	errs []error
}

func (e *buildError) Error() string   { return e.msg }
func (e *buildError) Unwrap() []error { return e.errs }

func fromWire(w *wireError) error {
	e := &buildError{msg: w.Message}
	if s, ok := sentinels[w.Sentinel]; ok {
		e.errs = append(e.errs, s)
	}
	if w.Limit != nil {
		e.errs = append(e.errs, w.Limit)
	}
	return e
}

// toObjects decodes the objects as unstructured does (numbers as int64 or
// float64, the only numeric types it can deep-copy).
func toObjects(raw []json.RawMessage) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(raw))
	for i, b := range raw {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("render worker: object %d of its answer: %w", i, err)
		}
		out[i] = u
	}
	return out, nil
}
