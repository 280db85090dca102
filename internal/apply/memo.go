/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// memo.go: syncMemo, the desired state and resourceVersion last found in
// sync per object, which lets an idle Apply skip the live read.

package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// syncMemo remembers, per object, the desired state last found in sync and
// the resourceVersion the object had then. The dry-run of an unchanged
// object returns the stored resourceVersion, so when both still match,
// nothing (neither Git nor anyone else) changed the object since: no drift,
// and the object need not be read. This takes the live read, a paged LIST
// of a whole namespace per kind, off every no-op poll.
type syncMemo struct {
	mu sync.Mutex
	m  map[string]memoEntry
}

type memoEntry struct{ hash, resourceVersion string }

func newSyncMemo() *syncMemo { return &syncMemo{m: map[string]memoEntry{}} }

// inSync reports whether desired, whose dry-run returned dry, is known to
// be applied and untouched.
func (s *syncMemo) inSync(it *item, dry *unstructured.Unstructured) bool {
	if s == nil || dry.GetResourceVersion() == "" {
		return false
	}
	s.mu.Lock()
	e, ok := s.m[it.id]
	s.mu.Unlock()
	return ok && e.resourceVersion == dry.GetResourceVersion() && e.hash == desiredHash(it.obj)
}

// record notes that it is in sync at resourceVersion rv.
func (s *syncMemo) record(it *item, rv string) {
	if s == nil || rv == "" {
		return
	}
	h := desiredHash(it.obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[it.id] = memoEntry{hash: h, resourceVersion: rv}
}

func desiredHash(obj *unstructured.Unstructured) string {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
