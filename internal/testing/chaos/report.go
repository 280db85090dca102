/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// report.go: Report, what a run did and found, filled from its parts by
// collect.

package chaos

import (
	"fmt"
	"strings"
	"time"
)

// Report is what a run did and found.
type Report struct {
	Seed     uint64
	Duration time.Duration
	Pace     Pace
	// Digest identifies the schedule (Schedule.Digest).
	Digest         string
	Started, Ended time.Time
	// SetupTook is the start of every process and the first deployments;
	// FaultPhase the pushes and faults; SettleTook the wait for rest.
	SetupTook, FaultPhase, SettleTook time.Duration
	Settled                           bool
	// Unrest is what was still moving when the system did not come to
	// rest ("" when it did).
	Unrest string

	// Commits pushed, by kind (seed and finishing commits included).
	Commits map[string]int
	// Rollouts observed, by kind and by outcome (one rollout per target
	// revision of a job).
	Rollouts map[string]map[string]int
	// Faults injected by kind; FaultNotes are those that could not act.
	Faults     map[string]int
	FaultNotes []string
	// Person counts the promotions and aborts of Manual jobs.
	Person map[string]int
	// Exits are the exits of processes nobody asked for (a controller that
	// lost its lease, a crash), by process; Restarts by process.
	Exits, Restarts map[string]int
	// Jobs and Savepoints the simulator recorded.
	Jobs, Savepoints int
	// Statuses posted to the pushed commits, by state.
	Statuses map[string]int
	// Checks counts the evaluations of each invariant; Passes the reads of
	// the world, Partial those that found a component down.
	Checks          map[string]int
	Passes, Partial int
	Violations      []Violation
	// Lost and Duplicated count the commit-status violations of those kinds.
	Lost, Duplicated int
	// FinalStates is each job's state at the end.
	FinalStates map[string]string
	// Leaks are the process groups left after the run; Groups how many
	// were started.
	Leaks  []int
	Groups int
	// Dir is the kept run directory (logs), "" when removed.
	Dir string
	Err error
}

// collect fills the report from the run's parts, after the final pass.
func (r *Report) collect(e *env, rec *recorder, n *nemesis, chk *checker, p *person) {
	r.Commits = map[string]int{}
	for _, c := range e.git.pushed() {
		r.Commits[c.Kind]++
	}
	r.Rollouts = map[string]map[string]int{}
	for _, ep := range rec.snapshot() {
		outcome := ep.outcome
		if outcome == "" {
			outcome = "unfinished"
		}
		if r.Rollouts[ep.kind] == nil {
			r.Rollouts[ep.kind] = map[string]int{}
		}
		r.Rollouts[ep.kind][outcome]++
	}
	r.Faults, r.FaultNotes = n.injected()
	r.Person = p.actions()
	r.Exits, r.Restarts = map[string]int{}, map[string]int{}
	for _, s := range e.all() {
		r.Exits[s.name], r.Restarts[s.name] = s.counts()
	}
	r.Checks, r.Violations, r.Passes, r.Partial = chk.results()
	for _, v := range r.Violations {
		switch v.Invariant {
		case invStatusNotLost:
			r.Lost++
		case invStatusOnce:
			r.Duplicated++
		}
	}
	r.collectWorld(e, chk)
}

func (r *Report) collectWorld(e *env, chk *checker) {
	if l, err := readJournalFile(e.journalPath()); err == nil {
		r.Jobs, r.Savepoints = len(l.Jobs()), len(l.Savepoints())
	}
	chk.mu.Lock()
	defer chk.mu.Unlock()
	r.Statuses = map[string]int{}
	for _, cached := range chk.statuses {
		for _, s := range cached.statuses {
			r.Statuses[s.State]++
		}
	}
	r.FinalStates = map[string]string{}
	rec := chk.rec
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for key, o := range rec.last {
		r.FinalStates[key] = strings.TrimSpace(fmt.Sprintf("%s %s %s (target %s, carries %s)%s%s", o.state, o.job, short(o.activeRev),
			short(o.target), short(o.revisionAnn), reasonText(o.reason), errText(o.errMsg)))
	}
}

// Transitions sums the rollouts of a kind... by outcome over every kind.
func (r *Report) Transitions() (started int, byOutcome map[string]int) {
	byOutcome = map[string]int{}
	for _, outcomes := range r.Rollouts {
		for o, n := range outcomes {
			started += n
			byOutcome[o] += n
		}
	}
	return started, byOutcome
}
