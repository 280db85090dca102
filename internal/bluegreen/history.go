/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// history.go: status.history — beginning, updating, ending and superseding
// the entry of the rollout under way.

package bluegreen

import (
	"slices"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// status.history holds one entry per rollout, begun where a rollout
// starts, updated as it goes and ended where it succeeds, aborts or fails.
// Decide runs many times per rollout: an entry is begun only by the
// decision that starts the rollout (the next one finds the rollout under
// way), and updates write what a decision on the same observation writes
// again, so re-running Decide never adds or changes an entry twice. The
// invariant, checked by the explorer (checkHistory): at most one entry is
// InProgress, the last one, exactly while the state is in progress.

// supersededReason ends an entry that no hook ended before the next
// rollout began. No path should need it; the explorer checks none does.
const supersededReason = "ended without an outcome: a new rollout began"

// begin appends an InProgress entry for the rollout of the current
// revision, starting now, and drops the oldest beyond MaxHistory.
func (d *decider) begin(r v1alpha1.RolloutRecord) {
	d.end(v1alpha1.RolloutAborted, supersededReason)
	r.Revision, r.StartedAt, r.Outcome = d.revision(), *d.ts(d.now), v1alpha1.RolloutInProgress
	r.FinishedAt, r.Reason = nil, ""
	h := append(slices.Clone(d.st.History), r)
	if n := len(h) - v1alpha1.MaxHistory; n > 0 {
		h = h[n:]
	}
	d.st.History = h
}

// beginUnlessUnderWay begins r when no rollout is under way: a rollout
// refused at its start (a rejected request, an invalid savepoint format)
// gets an entry of its own, ended at once.
func (d *decider) beginUnlessUnderWay(r v1alpha1.RolloutRecord) {
	if d.current() == nil {
		d.begin(r)
	}
}

// current is the entry of the rollout under way, nil when there is none.
func (d *decider) current() *v1alpha1.RolloutRecord {
	if n := len(d.st.History); n > 0 && d.st.History[n-1].Outcome == v1alpha1.RolloutInProgress {
		return &d.st.History[n-1]
	}
	return nil
}

// record updates the entry of the rollout under way, if any.
func (d *decider) record(update func(r *v1alpha1.RolloutRecord)) {
	if r := d.current(); r != nil {
		update(r)
	}
}

// end ends the rollout under way, if any, with outcome and reason. A
// replica whose clock runs behind the one that began it never records it
// finished before it started.
func (d *decider) end(outcome v1alpha1.RolloutOutcome, reason string) {
	d.record(func(r *v1alpha1.RolloutRecord) {
		r.Outcome, r.Reason, r.FinishedAt = outcome, reason, d.ts(d.now)
		if r.FinishedAt.Before(&r.StartedAt) {
			r.FinishedAt = r.StartedAt.DeepCopy()
		}
	})
}

// supersede ends the rollout under way for a spec changed mid-way and
// begins the rollout of the new spec on the same children, from the same
// savepoint; path is the initialSavepointPath its target is applied with.
func (d *decider) supersede(path string) {
	r := d.current()
	if r == nil {
		return
	}
	next := *r.DeepCopy()
	next.RestoredFrom = path
	if next.Kind == v1alpha1.RolloutInPlace {
		next.RestoredFrom = "" // see RolloutRecord.RestoredFrom
	}
	d.end(v1alpha1.RolloutSuperseded, "superseded by "+revOr(d.revision())+": the spec changed during the rollout")
	d.begin(next)
}

// activeJobState is the job state of the active child as observed, for
// kubectl's JOB column: after an abort it shows the old colour RUNNING
// while jobStatus.state reports the rollout FAILING.
func (d *decider) activeJobState() string {
	if c := d.activeChild(); c != nil {
		return c.JobState
	}
	return ""
}

// supersedeIfRevised supersedes the rollout under way when what is about
// to be applied is another revision than the one it rolls out (a commit
// that landed while the savepoint was taken, or while the target was
// being deleted and its status write was lost).
func (d *decider) supersedeIfRevised(path string) bool {
	if r := d.current(); r != nil && r.Revision != d.revision() {
		d.supersede(path)
		return true
	}
	return false
}
