/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/render"
)

// Arg is the one argument that makes the binary a render worker.
const Arg = "__bg-gitops-render-worker"

// request is what the parent sends on the worker's stdin.
type request struct {
	Root, Path       string
	AllowRemoteBases bool
	AllowFileURLs    bool
	Revision, Source string
	Limits           render.Limits
	// MaxMemory (bytes), MaxCPU (seconds), MaxStack (bytes) are the
	// worker's own limits.
	MaxMemory, MaxCPU, MaxStack int64
}

// response is what the worker writes on its stdout.
type response struct {
	Objects []json.RawMessage `json:",omitempty"`
	Error   *wireError        `json:",omitempty"`
}

// wireError is a build error as it crosses the process boundary: its
// message, the sentinel it wraps (by name) and the limit it hit.
type wireError struct {
	Message  string
	Sentinel string             `json:",omitempty"`
	Limit    *render.LimitError `json:",omitempty"`
}

// sentinels are the errors callers classify, by a stable name.
var sentinels = map[string]error{
	"leaves-repository": render.ErrLeavesRepository,
	"absolute-path":     render.ErrAbsolutePath,
	"remote-refused":    render.ErrRemoteRefused,
	"remote-in-schema":  render.ErrRemoteInSchemaBuild,
	"file-url-refused":  render.ErrFileURLRefused,
	"remote-openapi":    render.ErrRemoteOpenAPI,
	"not-found":         render.ErrNotFound,
	"duplicate-object":  render.ErrDuplicateObject,
	"helm-refused":      render.ErrHelmRefused,
	"read-only":         render.ErrReadOnly,
	"alias-cycle":       render.ErrAliasCycle,
	"limit-exceeded":    render.ErrLimitExceeded,
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
	return w
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
