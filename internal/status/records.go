/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// records.go: the records of what the forge has acknowledged — Intents,
// Unacknowledged, UnconfirmedVerdicts and MergeRecords.

package status

import (
	"slices"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// MaxRecords bounds status.commitStatuses.
const MaxRecords = 8

// Intents are the records, unconfirmed, of the pending statuses about to
// be posted on revisions that no record shows pending. They are stored
// before the post: a controller that stops between the post and its
// status write leaves the revision in the records, and whoever leads
// next gives it a verdict, also once a newer revision superseded it
// (SyncDesired, RolloutDesired). A record already pending needs none.
func Intents(missing []Desired, records []v1alpha1.CommitStatusRecord) []v1alpha1.CommitStatusRecord {
	var out []v1alpha1.CommitStatusRecord
	for _, d := range missing {
		if d.Status.State != StatePending || slices.ContainsFunc(records, func(r v1alpha1.CommitStatusRecord) bool {
			return r.Context == d.Status.Context && r.Revision == d.Revision && r.State == string(StatePending)
		}) {
			continue
		}
		out = append(out, v1alpha1.CommitStatusRecord{Context: d.Status.Context, Revision: d.Revision,
			State: string(d.Status.State), Description: d.Status.Description, Unconfirmed: true})
	}
	return out
}

// Unacknowledged returns the desired statuses without an identical record.
func Unacknowledged(desired []Desired, records []v1alpha1.CommitStatusRecord, provider string) []Desired {
	var out []Desired
	for _, d := range desired {
		d.Status.Description = Truncate(d.Status.Description, provider)
		if !hasRecord(records, d) {
			out = append(out, d)
		}
	}
	return out
}

func hasRecord(records []v1alpha1.CommitStatusRecord, d Desired) bool {
	for _, r := range records {
		if !r.Unconfirmed && r.Context == d.Status.Context && r.Revision == d.Revision && r.State == string(d.Status.State) && r.Description == d.Status.Description {
			return true
		}
	}
	return false
}

func sameStatus(a, b v1alpha1.CommitStatusRecord) bool {
	return a.State == b.State && a.Description == b.Description
}

// UnconfirmedVerdicts are the verdicts whose post got no answer and that
// desired no longer holds (the object moved on): they are looked for and
// posted again, as they were, until the forge confirms them. A pending one
// is left to desired, which gives it a verdict.
func UnconfirmedVerdicts(records []v1alpha1.CommitStatusRecord, desired []Desired) []Desired {
	var out []Desired
	for _, r := range records {
		if !r.Unconfirmed || r.State == string(StatePending) || slices.ContainsFunc(desired, func(d Desired) bool {
			return d.Revision == r.Revision && d.Status.Context == r.Context
		}) {
			continue
		}
		out = append(out, Desired{Revision: r.Revision,
			Status: Entry{Context: r.Context, State: State(r.State), Description: r.Description}})
	}
	return out
}

// MergeRecords replaces the record of the same context and revision,
// counting the pending statuses posted for it, and keeps the newest
// MaxRecords.
func MergeRecords(records, acked []v1alpha1.CommitStatusRecord) []v1alpha1.CommitStatusRecord {
	for _, a := range acked {
		kept := records[:0:0]
		a.Pending = 0
		var prev *v1alpha1.CommitStatusRecord
		for _, r := range records {
			if r.Context != a.Context || r.Revision != a.Revision {
				kept = append(kept, r)
			} else {
				prev = &r
				a.Pending = r.Pending
			}
		}
		if prev != nil && prev.Unconfirmed && a.Unconfirmed && sameStatus(*prev, a) {
			// The same post failed again: the record stays where it is,
			// so that it ages out like the others.
			continue
		}
		// A pending counts when it is posted, confirmed or not; its
		// confirmation does not count it again.
		if a.State == string(StatePending) && (prev == nil || !prev.Unconfirmed || !sameStatus(*prev, a)) {
			a.Pending++
		}
		records = append(kept, a)
	}
	if len(records) > MaxRecords {
		records = records[len(records)-MaxRecords:]
	}
	return records
}
