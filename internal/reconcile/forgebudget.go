/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// forgebudget.go: forgeBudget, the forge call time each namespace may spend
// per window.

package reconcile

import (
	"fmt"
	"sync"
	"time"

	"bggitops.dev/bg-gitops/internal/status"
)

// A namespace's forges may hold workers for forgeBudgetPerWindow in every
// forgeBudgetWindow: a forge that never answers costs its namespace a
// worker for forgeTimeout at each try, and without a bound a tenant with
// as many objects as workers would stop every other tenant's rollouts
// (the FlinkBlueGreenDeployment workers run all of them).
// --forge-budget-per-namespace (Options.ForgeBudget) sets the budget.
const (
	forgeBudgetWindow    = time.Minute
	forgeBudgetPerWindow = 2 * forgeTimeout
	// DefaultForgeBudget is the default of --forge-budget-per-namespace.
	DefaultForgeBudget = forgeBudgetPerWindow
)

// forgeBudget counts the time spent in forge calls per namespace (the
// namespace of the GitRepository that names the forge: its tenant chose
// the address). A nil budget bounds nothing.
type forgeBudget struct {
	per    time.Duration
	window time.Duration

	mu    sync.Mutex
	spent map[string]*forgeSpent
}

type forgeSpent struct {
	since time.Time // start of the window
	used  time.Duration
}

func newForgeBudget(per, window time.Duration) *forgeBudget {
	return &forgeBudget{per: per, window: window, spent: map[string]*forgeSpent{}}
}

// allow is the forge time ns may still spend, or, once it has none
// left, a RateLimitedError saying when its window ends: its posts wait
// rather than hold a worker.
func (b *forgeBudget) allow(ns string, now time.Time) (time.Duration, error) {
	if b == nil {
		return forgeTimeout, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.current(ns, now)
	if left := b.per - s.used; left > 0 {
		return left, nil
	}
	return 0, &status.RateLimitedError{RetryAfter: s.since.Add(b.window).Sub(now),
		Message: fmt.Sprintf("the forges of namespace %s took their share of %s per %s; waiting", ns, b.per, b.window)}
}

// spend charges d of forge time to ns.
func (b *forgeBudget) spend(ns string, now time.Time, d time.Duration) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.current(ns, now).used += d
}

// current is ns's window at now, a fresh one once the last has ended.
// b.mu is held.
func (b *forgeBudget) current(ns string, now time.Time) *forgeSpent {
	s, ok := b.spent[ns]
	if !ok || !now.Before(s.since.Add(b.window)) {
		s = &forgeSpent{since: now}
		b.spent[ns] = s
	}
	return s
}
