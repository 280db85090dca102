/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pullrequests_retry.go: what the planner keeps between passes in memory —
// the backoff of a GitRepository whose heads keep failing for a passing
// reason or being refused by the forge, and the last report of each head,
// so that a refused comment is written again without planning again.

package reconcile

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// maxBackoffDoublings bounds the exponent of the backoff (the interval
// caps it long before).
const maxBackoffDoublings = 16

// reportKey is a head's report: a pull request of a GitRepository at a
// commit.
type reportKey struct {
	id     types.NamespacedName
	number int64
	sha    string
}

// prMemory is the planner's memory; lost on a restart, which costs one
// plan of the heads whose report was not written yet.
type prMemory struct {
	mu       sync.Mutex
	failures map[types.NamespacedName]int
	reports  map[reportKey]string
}

// backoff is when to look again at id after one more pass that left
// something to retry: forgeRetry, doubled at each such pass in a row,
// at most interval.
func (m *prMemory) backoff(id types.NamespacedName, interval time.Duration) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failures == nil {
		m.failures = map[types.NamespacedName]int{}
	}
	n := min(m.failures[id], maxBackoffDoublings)
	m.failures[id]++
	return min(forgeRetry<<n, max(interval, forgeRetry))
}

// reset: a pass left nothing to retry.
func (m *prMemory) reset(id types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.failures, id)
}

// keepReport remembers the report of a head until its comment is written.
func (m *prMemory) keepReport(k reportKey, markdown string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reports == nil {
		m.reports = map[reportKey]string{}
	}
	for old := range m.reports {
		if old.id == k.id && old.number == k.number {
			delete(m.reports, old) // an older head's
		}
	}
	m.reports[k] = markdown
}

// report is the remembered report of a head.
func (m *prMemory) report(k reportKey) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	md, ok := m.reports[k]
	return md, ok
}

// dropReport: the comment is written (or the head is gone).
func (m *prMemory) dropReport(k reportKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.reports, k)
}

// forget drops all of id's memory (the GitRepository is gone).
func (m *prMemory) forget(id types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.failures, id)
	for k := range m.reports {
		if k.id == id {
			delete(m.reports, k)
		}
	}
}
