/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// check_jobs.go: checkLineage, which judges each stop of a job the lineage
// shows (checkStop, checkCutover) and each start (checkStart).

package chaos

import (
	"math"
	"strings"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// The simulator's lineage says, for every job, when it ran, what it
// restored from and why it stopped. Each stop and each start is judged
// once, when the journal first shows it.

// precision covers deletionTimestamp's whole seconds and the time a
// controller's read takes to become its action.
const precision = 1500 * time.Millisecond

// crashRace: the new colour may crash after the controller read it ready
// and before it deleted the old one (the job's own fault, not the
// controller's): its crash that recently is no violation.
const crashRace = 10 * time.Second

// sinceEver: an abort keeps the old colour as it is, crashed or not; what
// matters is that the controller did not stop it.
const sinceEver = time.Duration(math.MaxInt64)

func (c *checker) checkLineage(l *flinksim.Lineage) {
	for key, js := range lineageOfJob(l) {
		def, _ := jobByName(splitKey(key))
		for _, j := range js {
			if !c.judged["start:"+j.ID] {
				c.judged["start:"+j.ID] = true
				c.checkStart(l, key, def, j, js)
			}
			if j.Stopped && !c.judged["stop:"+j.ID] {
				c.judged["stop:"+j.ID] = true
				c.checkStop(l, key, def, j, js)
			}
		}
	}
}

// checkStop: a job that ran is stopped by the controller only when the
// other colour runs (a cut-over: deleted once the new colour runs; an
// abort: the new colour suspended while the old one is kept), else only
// by a user's suspend or a hand deletion. A job that failed, or was
// restarted in place by a new spec, stopped for its own reasons.
func (c *checker) checkStop(l *flinksim.Lineage, key string, def jobDef, j flinksim.Job, js []flinksim.Job) {
	ns, child := splitKey(j.Deployment)
	switch j.StopReason {
	case flinksim.StopDeleted:
		c.count(invJobKept)
		if c.n.deletedByHand(ns, child, j.DeletedAt.Add(-precision), j.StoppedAt.Add(precision)) {
			return
		}
		k, ok := otherRunning(js, child, j.DeletedAt, crashRace)
		if !ok {
			c.violateAt(invJobKept, "stop:"+j.ID, []string{key}, j.DeletedAt, "%s was deleted at %s while its job %s ran and %s ran none",
				child, c.tl.since(j.DeletedAt), shortID(j.ID), otherColour(child))
			return
		}
		if def.Stateful && chainStart(l, j).Before(chainStart(l, k)) {
			c.checkCutover(l, key, j, k)
		}
	case flinksim.StopSuspended:
		c.count(invJobKept)
		if c.userSuspended(def, j.StopRevision) {
			return
		}
		if _, ok := otherRunning(js, child, j.StoppedAt, sinceEver); !ok {
			c.violateAt(invJobKept, "stop:"+j.ID, []string{key}, j.StoppedAt, "%s's job %s was suspended at %s at %s, which does not ask for it, while %s ran none",
				child, shortID(j.ID), c.tl.since(j.StoppedAt), short(j.StopRevision), otherColour(child))
		}
	}
}

// userSuspended reports whether the commit rev suspends the job.
func (c *checker) userSuspended(def jobDef, rev string) bool {
	commit := c.e.git.byRevision(rev)
	return commit != nil && commit.Specs[def.Name].Suspended
}

// otherRunning finds the job of the other colour that ran at t: started
// by then and not stopped before it, or crashed at most race before it.
// One still running is preferred, then the one that ran last.
func otherRunning(js []flinksim.Job, child string, t time.Time, race time.Duration) (flinksim.Job, bool) {
	other := otherColour(child)
	var best flinksim.Job
	found := false
	for _, k := range js {
		_, name := splitKey(k.Deployment)
		if name != other || k.StartedAt.After(t.Add(precision)) {
			continue
		}
		ran := !k.Stopped || !k.StoppedAt.Before(t.Add(-precision)) ||
			(k.StopReason == flinksim.StopFailed && !k.StoppedAt.Before(t.Add(-race)))
		if ran && (!found || better(k, best)) {
			best, found = k, true
		}
	}
	return best, found
}

func better(a, b flinksim.Job) bool {
	if a.Stopped != b.Stopped {
		return !a.Stopped
	}
	return a.StartedAt.After(b.StartedAt)
}

// checkCutover: the job that replaced old restored, through its own
// colour's restarts, from a savepoint of old or of an earlier run of old's
// colour that old continues.
func (c *checker) checkCutover(l *flinksim.Lineage, key string, old, repl flinksim.Job) {
	c.count(invLineage)
	ancestors := colourAncestors(l, old)
	cur := repl
	for step := 0; step < 1000; step++ {
		if cur.RestoredFrom == "" {
			c.violateAt(invLineage, "cut:"+old.ID, []string{key}, old.DeletedAt, "%s replaced %s but started without state (job %s)",
				repl.Deployment, old.Deployment, shortID(cur.ID))
			return
		}
		sp, ok := l.Savepoint(cur.RestoredFrom)
		if !ok {
			c.violateAt(invLineage, "cut:"+old.ID, []string{key}, old.DeletedAt, "job %s restored from %s, which no job wrote", shortID(cur.ID), cur.RestoredFrom)
			return
		}
		src, _ := l.Job(sp.JobID)
		switch {
		case src.Deployment == repl.Deployment:
			cur = src
			continue
		case ancestors[src.ID]:
			return
		}
		c.violateAt(invLineage, "cut:"+old.ID, []string{key}, old.DeletedAt, "%s (job %s) replaced job %s of %s but restored from %s, a savepoint of job %s of %s",
			repl.Deployment, shortID(repl.ID), shortID(old.ID), old.Deployment, cur.RestoredFrom, shortID(src.ID), src.Deployment)
		return
	}
}

// chainStart is when the run of j's colour that j continues began: a
// deletion is a cut-over when the deleted colour ran first (deleting a new
// colour while the old one runs is an abort or a restart of the rollout).
func chainStart(l *flinksim.Lineage, j flinksim.Job) time.Time {
	start := j.StartedAt
	for id := range colourAncestors(l, j) {
		if a, ok := l.Job(id); ok && a.StartedAt.Before(start) {
			start = a.StartedAt
		}
	}
	return start
}

// colourAncestors are j and the jobs of its FlinkDeployment it continues
// (in-place restarts, flaps, a resume).
func colourAncestors(l *flinksim.Lineage, j flinksim.Job) map[string]bool {
	out := map[string]bool{j.ID: true}
	for cur := j; ; {
		sp, ok := l.Savepoint(cur.RestoredFrom)
		if !ok {
			return out
		}
		src, ok := l.Job(sp.JobID)
		if !ok || src.Deployment != j.Deployment || out[src.ID] {
			return out
		}
		out[src.ID] = true
		cur = src
	}
}

// checkStart: once a stateful job ran, every later job restores from a
// savepoint the lineage knows, unless a hand deletion since the previous
// start took every state away.
func (c *checker) checkStart(l *flinksim.Lineage, key string, def jobDef, j flinksim.Job, js []flinksim.Job) {
	if !def.Stateful {
		return
	}
	c.count(invNoFreshStart)
	var prev *flinksim.Job
	for i := range js {
		if js[i].ID != j.ID && js[i].StartedAt.Before(j.StartedAt) {
			prev = &js[i]
		}
	}
	if j.RestoredFrom != "" {
		if _, ok := l.Savepoint(j.RestoredFrom); !ok {
			c.violateAt(invNoFreshStart, "start:"+j.ID, []string{key}, j.StartedAt, "job %s of %s restored from %s, which no job wrote", shortID(j.ID), j.Deployment, j.RestoredFrom)
		}
		return
	}
	if prev == nil {
		return // the first job starts empty
	}
	ns, _ := splitKey(key)
	for _, d := range c.n.handDeletionsOf(ns, def.Name) {
		if !d.at.Before(prev.StartedAt.Add(-precision)) && !d.at.After(j.StartedAt) {
			return
		}
	}
	c.violateAt(invNoFreshStart, "start:"+j.ID, []string{key}, j.StartedAt, "job %s of %s started at %s without state, after job %s of %s",
		shortID(j.ID), j.Deployment, c.tl.since(j.StartedAt), shortID(prev.ID), prev.Deployment)
}

func otherColour(child string) string {
	if strings.HasSuffix(child, "-blue") {
		return strings.TrimSuffix(child, "-blue") + "-green"
	}
	return strings.TrimSuffix(child, "-green") + "-blue"
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
