/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// checker.go: the invariants, Violation, and checker, which reads the world
// in passes and records each check and each violation with the logs that
// lead to it.

package chaos

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// The invariants, as the report names them.
const (
	invJobKept        = "a running job is stopped only for another one, a user's suspend or a hand deletion"
	invLineage        = "a stateful job that replaced one restored from its savepoint"
	invNoFreshStart   = "a stateful job never starts empty once it ran"
	invOneChildColour = "at most one child per colour, one job per child"
	invTimers         = "every rollout ends within its timers plus the outage"
	invStatusOnce     = "no commit status twice, nothing after a rollout's success"
	invStatusBound    = "at most 7 pending statuses per commit and context"
	invStatusCommit   = "statuses only on commits and contexts they belong to"
	invStatusOutcome  = "statuses say what happened"
	invStatusNotLost  = "every commit ends with its verdict (not left pending, not missing)"
)

// Invariants lists them in the order of the report.
func Invariants() []string {
	return []string{invJobKept, invLineage, invNoFreshStart, invOneChildColour, invTimers,
		invStatusOnce, invStatusBound, invStatusCommit, invStatusOutcome, invStatusNotLost}
}

// Violation is a broken invariant.
type Violation struct {
	Invariant string
	Subject   string
	Detail    string
	// At is when the checker found it; When when it happened, if known.
	At, When time.Time
	// Log is the timeline up to the violation, about its subject;
	// Controllers the lines of the controllers' logs about it around When.
	Log, Controllers []string
}

// checker reads the world and holds it to the invariants: after every
// fault (what can be judged then) and at the end (everything).
type checker struct {
	e   *env
	tl  *timeline
	n   *nemesis
	rec *recorder

	mu         sync.Mutex
	counts     map[string]int // evaluations per invariant
	violations []Violation
	reported   map[string]bool
	judged     map[string]bool // lineage events and episodes already judged for good
	statuses   map[string]statusCache
	passes     int
	partial    int // passes that could not read everything
}

func newChecker(e *env, tl *timeline, n *nemesis, rec *recorder) *checker {
	return &checker{e: e, tl: tl, n: n, rec: rec, counts: map[string]int{}, reported: map[string]bool{},
		judged: map[string]bool{}, statuses: map[string]statusCache{}}
}

// pass reads the world once and checks it; final adds the checks of
// "eventually".
func (c *checker) pass(ctx context.Context, why string, final bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.passes++
	complete := true
	if l, err := readJournalFile(c.e.journalPath()); err == nil {
		c.checkLineage(l)
	} else {
		complete = false
	}
	w, err := c.readWorld(ctx)
	if err == nil {
		c.checkChildren(w)
	} else {
		complete = false
	}
	c.checkTimers(final)
	if !c.checkStatuses(ctx, w, final) {
		complete = false
	}
	if !complete {
		c.partial++
	}
	c.tl.logf(checkerLine, "check pass %d after %s: %d violations so far%s", c.passes, why, len(c.violations), map[bool]string{true: "", false: " (partial: a component was down)"}[complete])
}

// count records one evaluation of an invariant.
func (c *checker) count(inv string) { c.counts[inv]++ }

// violate records a violation once per key, about subject (a job as
// namespace/name, or a repository) and the moment it happened (zero: now).
func (c *checker) violate(inv, key, subject, format string, args ...any) {
	c.violateAt(inv, key, []string{subject}, time.Time{}, format, args...)
}

// violateAt records a violation about subjects (the first is the one the
// report names) that happened at at; the excerpts of the timeline and of
// the controllers' logs lead up to it.
func (c *checker) violateAt(inv, key string, subjects []string, at time.Time, format string, args ...any) {
	if c.reported[inv+"|"+key] {
		return
	}
	c.reported[inv+"|"+key] = true
	v := Violation{Invariant: inv, Subject: subjects[0], Detail: fmt.Sprintf(format, args...), At: time.Now(), When: at}
	until := v.At
	if !at.IsZero() {
		until = at.Add(5 * time.Second)
	}
	v.Log = c.tl.excerpt(subjects, until, 40)
	if !at.IsZero() {
		v.Controllers = c.e.controllerExcerpt(subjects, at, 40)
	}
	c.violations = append(c.violations, v)
	c.tl.logf(subjects, "VIOLATION %s: %s: %s", inv, v.Subject, v.Detail)
}

// results returns the counts and violations.
func (c *checker) results() (map[string]int, []Violation, int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := map[string]int{}
	for k, v := range c.counts {
		counts[k] = v
	}
	vs := append([]Violation{}, c.violations...)
	sort.SliceStable(vs, func(a, b int) bool { return vs[a].At.Before(vs[b].At) })
	return counts, vs, c.passes, c.partial
}

// lineageOfJob groups the lineage's jobs by job (namespace/name), oldest
// first.
func lineageOfJob(l *flinksim.Lineage) map[string][]flinksim.Job {
	out := map[string][]flinksim.Job{}
	for _, j := range l.Jobs() {
		ns, child := splitKey(j.Deployment)
		if _, ok := jobByName(ns, jobOfChild(child)); ok {
			key := ns + "/" + jobOfChild(child)
			out[key] = append(out[key], j)
		}
	}
	return out
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}
