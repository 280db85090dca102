/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"sync"
	"time"
)

// busyRetry is when an object whose namespace had no free slot is looked
// at again.
const busyRetry = 2 * time.Second

// namespaceSlots shares one controller's workers between namespaces, so
// that one tenant cannot hold them all: a fetch from a git server that
// never answers holds its worker for spec.timeout (up to 5 minutes), a
// forge that never answers a commit status for 10 seconds at every try,
// and a tenant with as many such objects as workers would otherwise stop
// every other namespace's rollouts. A namespace that holds no worker may
// always take one; a namespace that holds some may take another only up
// to max, and only while one worker stays free for the others. A
// reconcile refused a slot is requeued without a status write.
type namespaceSlots struct {
	max     int // per namespace; <= 0: no bound
	workers int
	mu      sync.Mutex
	busy    map[string]int
	total   int
}

// newNamespaceSlots bounds the namespaces of a controller of workers
// workers to perNamespace each (0: all but one; negative: no bound).
func newNamespaceSlots(workers, perNamespace int) *namespaceSlots {
	if perNamespace == 0 {
		perNamespace = max(workers-1, 1)
	}
	return &namespaceSlots{max: perNamespace, workers: workers, busy: map[string]int{}}
}

// acquire takes a slot of ns; ok is false when ns may not take one now.
func (s *namespaceSlots) acquire(ns string) (release func(), ok bool) {
	if s == nil || s.max <= 0 {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if held := s.busy[ns]; held > 0 && (held >= s.max || s.total+1 >= s.workers) {
		return nil, false
	}
	s.busy[ns]++
	s.total++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.total--
		if s.busy[ns]--; s.busy[ns] == 0 {
			delete(s.busy, ns)
		}
	}, true
}
