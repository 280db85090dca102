/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package chaos

import (
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// lineageBuilder writes a simulator journal by hand: the checker's view of
// what the jobs did.
type lineageBuilder struct {
	t0    time.Time
	lines []string
}

func (b *lineageBuilder) at(s float64) time.Time {
	return b.t0.Add(time.Duration(s * float64(time.Second)))
}

func (b *lineageBuilder) add(v any) {
	data, _ := json.Marshal(v)
	b.lines = append(b.lines, string(data))
}

func (b *lineageBuilder) start(id, child, from string, at float64) {
	b.add(map[string]any{"job": flinksim.Job{ID: id, Deployment: "team-a/" + child, RestoredFrom: from, StartedAt: b.at(at)}})
}

func (b *lineageBuilder) stop(id, reason, rev string, at float64) {
	st := map[string]any{"jobID": id, "At": b.at(at), "Reason": reason, "Revision": rev}
	if reason == flinksim.StopDeleted {
		st["DeletedAt"] = b.at(at)
	}
	b.add(map[string]any{"stop": st})
}

func (b *lineageBuilder) savepoint(path, job string, at float64) {
	b.add(map[string]any{"savepoint": flinksim.Savepoint{Path: path, JobID: job, At: b.at(at)}})
}

func (b *lineageBuilder) lineage(t *testing.T) *flinksim.Lineage {
	l, err := flinksim.ReadJournal(strings.NewReader(strings.Join(b.lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func newTestChecker(commits ...*Commit) *checker {
	e := &env{git: &pusher{commits: commits}}
	tl := newTimeline(io.Discard)
	return newChecker(e, tl, newNemesis(e, tl), nil)
}

// The lineage invariants judge each stop and start: a cut-over after the
// new colour ran from the old one's savepoint passes; every way of losing
// the job or its state is found, and the exceptions hold.
func TestLineageInvariants(t *testing.T) {
	suspend := &Commit{Push: &Push{Specs: map[string]jobSpec{"orders": {Suspended: true}}}, Revision: "main@sha1:5555"}
	cases := []struct {
		name  string
		build func(b *lineageBuilder)
		hand  []string // children deleted by hand at 10 s
		want  []string // invariants violated
	}{
		{"cut-over from the savepoint", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.savepoint("/sp/1", "b1", 5)
			b.start("g1", "orders-green", "/sp/1", 7)
			b.stop("b1", flinksim.StopDeleted, "", 10)
		}, nil, nil},
		{"old colour deleted before the new one ran", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.savepoint("/sp/1", "b1", 5)
			b.stop("b1", flinksim.StopDeleted, "", 10)
			b.start("g1", "orders-green", "/sp/1", 14)
		}, nil, []string{invJobKept}},
		{"deleted by hand", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.stop("b1", flinksim.StopDeleted, "", 10)
		}, []string{"orders-blue"}, nil},
		{"new colour started empty", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.start("g1", "orders-green", "", 7)
			b.stop("b1", flinksim.StopDeleted, "", 10)
		}, nil, []string{invNoFreshStart, invLineage}},
		{"new colour from a stale savepoint of the other job", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.savepoint("/sp/1", "b1", 20)
			b.start("g1", "orders-green", "/sp/1", 30)
			b.stop("b1", flinksim.StopDeleted, "", 40)
			b.savepoint("/sp/2", "g1", 50)
			b.start("b2", "orders-blue", "/sp/2", 60)
			b.stop("g1", flinksim.StopDeleted, "", 70)
			b.start("g2", "orders-green", "/sp/1", 80) // green again, from blue's old savepoint
			b.stop("b2", flinksim.StopDeleted, "", 90)
		}, nil, []string{invLineage}},
		{"new colour deleted for a new spec, the old one runs", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.savepoint("/sp/1", "b1", 5)
			b.start("g1", "orders-green", "/sp/1", 7)
			b.stop("g1", flinksim.StopDeleted, "", 10)
		}, nil, nil},
		{"new colour crashed just before the cut-over", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.savepoint("/sp/1", "b1", 5)
			b.start("g1", "orders-green", "/sp/1", 6)
			b.stop("g1", flinksim.StopFailed, "", 9)
			b.stop("b1", flinksim.StopDeleted, "", 10)
		}, nil, nil},
		{"abort suspends the new colour, the old one runs", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.savepoint("/sp/1", "b1", 5)
			b.start("g1", "orders-green", "/sp/1", 6)
			b.stop("g1", flinksim.StopSuspended, "main@sha1:4444", 10)
		}, nil, nil},
		{"the only job suspended without the user asking", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.stop("b1", flinksim.StopSuspended, "main@sha1:4444", 10)
		}, nil, []string{invJobKept}},
		{"the user suspends", func(b *lineageBuilder) {
			b.start("b1", "orders-blue", "", 0)
			b.stop("b1", flinksim.StopSuspended, suspend.Revision, 10)
			b.savepoint("/sp/s", "b1", 10)
			b.start("b2", "orders-blue", "/sp/s", 20)
		}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &lineageBuilder{t0: time.Now().Add(-time.Hour)}
			tc.build(b)
			c := newTestChecker(suspend)
			for _, name := range tc.hand {
				c.n.deletions = append(c.n.deletions, handDeletion{namespace: "team-a", name: name, at: b.at(10)})
			}
			c.checkLineage(b.lineage(t))
			var got []string
			for _, v := range c.violations {
				got = append(got, v.Invariant)
			}
			sort.Strings(got)
			sort.Strings(tc.want)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("violations %q, want %q: %+v", got, tc.want, c.violations)
			}
		})
	}
}
