/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// nemesis.go: nemesis, which injects the scheduled faults one at a time and
// remembers the outages and hand deletions that excuse what the checker
// sees.

package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// nemesis injects the scheduled faults, one at a time, and remembers what
// it did: the outage windows that excuse a slow rollout, and the children
// it deleted by hand, which excuse a job that stopped.
type nemesis struct {
	e  *env
	tl *timeline

	mu        sync.Mutex
	windows   []window
	deletions []handDeletion
	wipes     []handDeletion
	counts    map[string]int
	notes     []string
}

// window is a time a fault may have held rollouts up: the fault itself and
// the recovery after it (a new leader, caches synced again, a lost webhook
// replaced by polling).
type window struct {
	kind     string
	from, to time.Time
}

// handDeletion is a child deleted, or a status wiped, by the nemesis.
type handDeletion struct {
	namespace, name string
	at              time.Time
}

// recovery is what each kind of fault may add to a rollout after it ended.
var recovery = map[string]time.Duration{
	faultKillController:  30 * time.Second, // lease expiry (15 s), restart, caches
	faultKillMidRollout:  30 * time.Second,
	faultPauseController: 30 * time.Second,
	faultRestartAPI:      45 * time.Second, // both replicas may lose the lease
	faultRestartEtcd:     45 * time.Second,
	faultStopGitea:       15 * time.Second, // a forge call holds a worker 10 s
	faultSlowGitea:       15 * time.Second,
	faultStopGitServer:   5 * time.Second,
	faultSlowGitServer:   5 * time.Second,
	faultDeleteChild:     45 * time.Second, // the rollout may start over
	faultDeleteSnapshot:  30 * time.Second,
	faultWipeStatus:      45 * time.Second,
	faultHoldAPI:         45 * time.Second, // the held replica loses the lease, restarts
	faultAPIErrors:       45 * time.Second, // the rollout the errors ended starts again
}

func newNemesis(e *env, tl *timeline) *nemesis {
	return &nemesis{e: e, tl: tl, counts: map[string]int{}}
}

// run injects each fault when it is due (from start), then calls after.
func (n *nemesis) run(ctx context.Context, faults []*Fault, start time.Time, after func(*Fault)) {
	for i, f := range faults {
		if !sleep(ctx, time.Until(start.Add(f.At))) {
			return
		}
		from := time.Now()
		n.tl.logf(global, "fault %d/%d: %s", i+1, len(faults), f)
		err := n.inject(ctx, f)
		if ctx.Err() != nil {
			return
		}
		n.record(f, from, err)
		after(f)
	}
}

func (n *nemesis) record(f *Fault, from time.Time, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.counts[f.Kind]++
	n.windows = append(n.windows, window{kind: f.Kind, from: from, to: time.Now().Add(recovery[f.Kind])})
	if err != nil {
		n.notes = append(n.notes, fmt.Sprintf("%s: %v", f, err))
		n.tl.logf(global, "fault %s: %v", f.Kind, err)
		return
	}
	n.tl.logf(global, "fault %s over after %.1fs", f.Kind, time.Since(from).Seconds())
}

// outageWithin is how much of [from, to] the faults' windows cover.
func (n *nemesis) outageWithin(from, to time.Time) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	var sum time.Duration
	for _, w := range n.windows {
		a, b := maxTime(from, w.from), minTime(to, w.to)
		if b.After(a) {
			sum += b.Sub(a)
		}
	}
	return sum
}

// deletedByHand reports a deletion of namespace/name by the nemesis in
// [from, to].
func (n *nemesis) deletedByHand(namespace, name string, from, to time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, d := range n.deletions {
		if d.namespace == namespace && d.name == name && !d.at.Before(from) && !d.at.After(to) {
			return true
		}
	}
	return false
}

// handDeletionsOf lists the nemesis's child deletions of job ns/name.
func (n *nemesis) handDeletionsOf(namespace, job string) []handDeletion {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []handDeletion
	for _, d := range n.deletions {
		if d.namespace == namespace && (d.name == job+"-blue" || d.name == job+"-green") {
			out = append(out, d)
		}
	}
	return out
}

func (n *nemesis) injected() (map[string]int, []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]int{}
	for k, v := range n.counts {
		out[k] = v
	}
	return out, append([]string{}, n.notes...)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
