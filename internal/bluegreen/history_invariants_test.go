/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"fmt"
	"reflect"
	"slices"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// checkHistory holds the invariants of status.history on a decision that
// turned status prev into next:
//   - at most MaxHistory entries; at most one InProgress, the last one,
//     and there is one exactly while the state is in progress (a rollout
//     never ends without an outcome, nor goes on without an entry);
//   - a finished entry has an outcome, a finish time, and, aborted or
//     failed, a reason; none was ended by begin's safety net;
//   - history only grows: the finished entries of prev are kept, unchanged
//     and in order (but for the oldest, trimmed), and prev's entry in
//     progress is still the same rollout when it is still there. So
//     re-running Decide can neither duplicate nor rewrite an entry.
func checkHistory(prev, next *v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	h := next.History
	if len(h) > v1alpha1.MaxHistory {
		return fmt.Errorf("%d history entries, more than %d", len(h), v1alpha1.MaxHistory)
	}
	for i, r := range h {
		if err := checkEntry(r, i == len(h)-1); err != nil {
			return fmt.Errorf("history[%d] %+v: %w", i, r, err)
		}
	}
	underWay := len(h) > 0 && h[len(h)-1].Outcome == v1alpha1.RolloutInProgress
	if underWay != next.BlueGreenState.InProgress() {
		return fmt.Errorf("state %s with a rollout in progress in history: %v", next.BlueGreenState, underWay)
	}
	return checkGrowth(prev.History, h)
}

func checkEntry(r v1alpha1.RolloutRecord, last bool) error {
	switch {
	case r.Outcome == v1alpha1.RolloutInProgress:
		if !last || r.FinishedAt != nil {
			return fmt.Errorf("in progress, but not the last entry, or finished")
		}
		return nil
	case r.Outcome == "" || r.FinishedAt == nil:
		return fmt.Errorf("finished without an outcome or a finish time")
	case r.Reason == supersededReason:
		return fmt.Errorf("ended by begin: no hook ended the rollout")
	case r.Outcome != v1alpha1.RolloutSucceeded && r.Reason == "":
		return fmt.Errorf("%s without a reason", r.Outcome)
	case r.Kind == "" || r.StartedAt.IsZero() || r.FinishedAt.Before(&r.StartedAt):
		return fmt.Errorf("kind or times missing or out of order")
	}
	return nil
}

// checkGrowth: next starts with prev's finished entries, but for the
// oldest ones trimmed, and then prev's entry in progress, if kept.
func checkGrowth(prev, next []v1alpha1.RolloutRecord) error {
	fin := prev
	var open *v1alpha1.RolloutRecord
	if n := len(prev); n > 0 && prev[n-1].Outcome == v1alpha1.RolloutInProgress {
		fin, open = prev[:n-1], &prev[n-1]
	}
	for drop := 0; drop <= len(fin); drop++ {
		kept := fin[drop:]
		if len(kept) > len(next) || !slices.EqualFunc(kept, next[:len(kept)], equalRecord) {
			continue
		}
		if open != nil && len(next) > len(kept) && !sameRollout(*open, next[len(kept)]) {
			return fmt.Errorf("the rollout in progress %+v became %+v", *open, next[len(kept)])
		}
		return nil
	}
	return fmt.Errorf("finished entries changed or lost:\nprev %+v\nnext %+v", prev, next)
}

func equalRecord(a, b v1alpha1.RolloutRecord) bool { return reflect.DeepEqual(a, b) }

// sameRollout: the identity of an entry, which updates keep.
func sameRollout(a, b v1alpha1.RolloutRecord) bool {
	// A fresh savepoint may replace one that aged (refreshSavepoint):
	// the entry then names it, with no path yet.
	sameSavepoint := a.SavepointName == b.SavepointName || b.SavepointPath == "" && a.SavepointName != ""
	return a.Kind == b.Kind && a.From == b.From && a.To == b.To && a.StartedAt.Equal(&b.StartedAt) &&
		a.Revision == b.Revision && sameSavepoint
}

// checkSavepointRecorded: an entry's savepoint path is where the snapshot
// it names completed (path looks a completed snapshot up by name). Which
// path the new colour restores from is checkHistoryApplies': a savepoint
// redeploy, or a switch to stateless, committed while the savepoint was
// taken starts it from the user's path instead.
func checkSavepointRecorded(h []v1alpha1.RolloutRecord, path func(name string) (string, bool)) error {
	for _, r := range h {
		if r.SavepointPath == "" {
			continue
		}
		if p, ok := path(r.SavepointName); !ok || p != r.SavepointPath {
			return fmt.Errorf("history records savepoint %s at %q; it completed at %q (%v)", r.SavepointName, r.SavepointPath, p, ok)
		}
	}
	return nil
}

// checkHistoryApplies: a decision that leaves a rollout in progress applies
// a running spec only to that rollout's target, with the savepoint path
// the entry says it restores from; in place, the entry names none.
func checkHistoryApplies(d Decision) error {
	h := d.Status.History
	if len(h) == 0 || h[len(h)-1].Outcome != v1alpha1.RolloutInProgress {
		return nil
	}
	r := h[len(h)-1]
	for _, a := range d.Actions {
		if a.Type != ApplyChild || a.Child.Spec.Suspended() {
			continue
		}
		path := a.Child.Spec.Job.InitialSavepointPath
		switch {
		case a.Child.Name != r.To:
			return fmt.Errorf("%s applied while history says the rollout is to %s", a.Child.Name, r.To)
		case a.Child.Revision != r.Revision:
			return fmt.Errorf("%s applied with %s while history says the rollout is of %s", a.Child.Name, a.Child.Revision, r.Revision)
		case r.Kind == v1alpha1.RolloutInPlace && r.RestoredFrom != "":
			return fmt.Errorf("in-place change of %s restores from %q in history", a.Child.Name, r.RestoredFrom)
		case r.Kind != v1alpha1.RolloutInPlace && r.RestoredFrom != path:
			return fmt.Errorf("%s applied with initialSavepointPath %q, history says it restores from %q", a.Child.Name, path, r.RestoredFrom)
		}
	}
	return nil
}
