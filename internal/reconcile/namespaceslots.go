/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"sync"
	"time"
)

// busyRetry is when a GitRepository whose namespace had no free slot is
// looked at again.
const busyRetry = 2 * time.Second

// namespaceSlots bounds the GitRepository reconciles of one namespace that
// run at once, so that one tenant cannot hold every worker: a fetch from a
// server that never answers holds its worker for spec.timeout (up to 5
// minutes), and a tenant with as many GitRepositories as workers would
// otherwise stop every other namespace's rollouts. A reconcile that finds
// its namespace full is requeued without a status write.
type namespaceSlots struct {
	max  int // <= 0: no bound
	mu   sync.Mutex
	busy map[string]int
}

// perNamespace is the default bound of n workers: all but one, so that
// one namespace always leaves a worker to the others.
func perNamespace(workers int) int {
	return max(workers-1, 1)
}

// acquire takes a slot of ns; ok is false when ns has none free.
func (s *namespaceSlots) acquire(ns string) (release func(), ok bool) {
	if s == nil || s.max <= 0 {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[ns] >= s.max {
		return nil, false
	}
	if s.busy == nil {
		s.busy = map[string]int{}
	}
	s.busy[ns]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.busy[ns]--; s.busy[ns] == 0 {
			delete(s.busy, ns)
		}
	}, true
}
