/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

const (
	orphaned  = "deleted with --cascade=orphan"
	otherJob  = "re-created from Git with another job (jarURI)"
	recreated = "re-created from Git"
)

// orphanStarts are states in which a deletion orphaned the children: in
// every phase of a rollout, gone, and created again with the same job or
// another.
var orphanStarts = []startState{
	{"ACTIVE_BLUE, orphaned", false, append(clip(activeBlue), orphaned), false},
	{"ACTIVE_BLUE, orphaned, re-created", false, append(clip(activeBlue), orphaned, "reconcile", recreated), false},
	{"ACTIVE_BLUE, orphaned, re-created with another job", false, append(clip(activeBlue), orphaned, "reconcile", otherJob), false},
	{"savepoint in flight, orphaned", false, append(withCommit(activeBlue), "reconcile", orphaned), false},
	{"new colour ready, orphaned, re-created", false, append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN",
		orphaned, "reconcile", recreated), false},
	{"deletion delay running, orphaned, re-created", false, append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN",
		"reconcile", orphaned, "reconcile", recreated), false},
}

// TestExploreOrphanedChildren: the explorer's search, with its invariants
// and faults, from states where a deletion orphaned the children, with the
// orphan events besides the others. Besides the model's invariants
// (state kept, one job, timers), checkUnowned: a child owned by nothing is
// never deleted, nor applied unless it runs the object's job, and then
// with the spec it runs.
func TestExploreOrphanedChildren(t *testing.T) {
	depth, faults := 12, 1
	if testing.Short() {
		depth, faults = 8, 0
	}
	events := concat(oneProcessEvents(), orphanEvents)
	seen, g := map[uint64]int{}, newStateGraph()
	for _, s := range orphanStarts {
		t.Run(s.name, func(t *testing.T) {
			m := newModel(v1alpha1.UpgradeModeSavepoint, s.manual)
			scripted(t, m, s.steps)
			r := explore(t, m, depth, faults, events, seen, g, scriptPos(s))
			t.Logf("%s (%s): %d states, %d after a completed blue/green rollout", s.name, m.describe(), r.states, r.blueGreen)
		})
	}
}
