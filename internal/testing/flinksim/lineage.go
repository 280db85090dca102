/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// lineage.go: Lineage, the simulator's record of Jobs and Savepoints, and
// the offset each job reached.

package flinksim

import (
	"sort"
	"sync"
	"time"
)

// RecordsPerSecond is the simulated throughput: a job's offset grows by this
// many records per second of running time.
const RecordsPerSecond = 1000

// Job is one simulated Flink job.
type Job struct {
	ID           string
	Deployment   string // namespace/name of the FlinkDeployment
	RestoredFrom string // savepoint (or checkpoint) path, empty for a fresh start
	StartOffset  int64  // offset restored from it (0 for a fresh start)
	StartedAt    time.Time
	// Revision is the FlinkDeployment's bggitops.dev/revision annotation
	// when the job started.
	Revision  string
	Stopped   bool
	StoppedAt time.Time // its offset stops growing then
	// StopReason says why it stopped (a Stop* constant).
	StopReason string
	// StopRevision is the FlinkDeployment's bggitops.dev/revision when the
	// job stopped: for StopSuspended, the revision that asked for it.
	StopRevision string
	// DeletedAt is the FlinkDeployment's deletionTimestamp, for
	// StopDeleted: when the deletion was asked, not when the simulator
	// saw it.
	DeletedAt time.Time
}

// Why a job stopped.
const (
	// StopDeleted: its FlinkDeployment was deleted.
	StopDeleted = "deleted"
	// StopRedeployed: a new spec restarted the job in place.
	StopRedeployed = "redeployed"
	// StopSuspended: the spec suspended the job.
	StopSuspended = "suspended"
	// StopFailed: the job failed (a simulated fault).
	StopFailed = "failed"
)

// Stop describes the end of a job.
type Stop struct {
	At        time.Time
	Reason    string
	Revision  string
	DeletedAt time.Time
}

// Savepoint is one completed simulated savepoint, or the last checkpoint
// of a failed job that the simulated operator restarted from it.
type Savepoint struct {
	Path   string
	JobID  string
	Offset int64
	At     time.Time
}

// Lineage is the simulator's record of jobs and savepoints.
type Lineage struct {
	mu         sync.Mutex
	jobs       map[string]*Job
	savepoints map[string]Savepoint
	journal    *journal // nil: not journaled
}

func newLineage() *Lineage {
	return &Lineage{jobs: map[string]*Job{}, savepoints: map[string]Savepoint{}}
}

// Savepoints returns every savepoint (and restart checkpoint) recorded,
// oldest first.
func (l *Lineage) Savepoints() []Savepoint {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Savepoint, 0, len(l.savepoints))
	for _, sp := range l.savepoints {
		out = append(out, sp)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out
}

// Jobs returns every job started, oldest first.
func (l *Lineage) Jobs() []Job {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Job, 0, len(l.jobs))
	for _, j := range l.jobs {
		out = append(out, *j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].StartedAt.Before(out[b].StartedAt) })
	return out
}

// Job returns the job with the given id.
func (l *Lineage) Job(id string) (Job, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	j, ok := l.jobs[id]
	if !ok {
		return Job{}, false
	}
	return *j, true
}

// Savepoint returns the savepoint at path (with or without a file: prefix).
func (l *Lineage) Savepoint(path string) (Savepoint, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sp, ok := l.savepoints[normalizePath(path)]
	return sp, ok
}

func (l *Lineage) startJob(j *Job) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sp, ok := l.savepoints[normalizePath(j.RestoredFrom)]; ok {
		j.StartOffset = sp.Offset
	}
	l.jobs[j.ID] = j
	l.journal.write(entry{Job: j})
}

func (l *Lineage) stopJob(id string, stop Stop) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if j, ok := l.jobs[id]; ok && !j.Stopped {
		j.applyStop(stop)
		l.journal.write(entry{Stop: &stopEntry{JobID: id, Stop: stop}})
	}
}

func (j *Job) applyStop(s Stop) {
	j.Stopped, j.StoppedAt = true, s.At
	j.StopReason, j.StopRevision, j.DeletedAt = s.Reason, s.Revision, s.DeletedAt
}

func (l *Lineage) known(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.jobs[id]
	return ok
}

// offset is the job's current record offset, or its last one once stopped.
func (l *Lineage) offset(id string, now time.Time) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	j, ok := l.jobs[id]
	if !ok {
		return 0, false
	}
	if j.Stopped {
		now = j.StoppedAt
	}
	return j.StartOffset + int64(now.Sub(j.StartedAt).Seconds()*RecordsPerSecond), true
}

func (l *Lineage) addSavepoint(sp Savepoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.savepoints[normalizePath(sp.Path)] = sp
	l.journal.write(entry{Savepoint: &sp})
}

func normalizePath(p string) string {
	for _, prefix := range []string{"file://", "file:"} {
		if len(p) > len(prefix) && p[:len(prefix)] == prefix {
			return p[len(prefix):]
		}
	}
	return p
}
