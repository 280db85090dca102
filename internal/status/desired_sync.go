/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// desired_sync.go: SyncDesired, the sync commit statuses a GitRepository's
// status calls for, and AppendRevision for status.appliedRevisions.

package status

import (
	"fmt"
	"slices"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/conditions"
)

// MaxAppliedRevisions bounds status.appliedRevisions.
const MaxAppliedRevisions = 8

// AppendRevision records rev as the newest applied revision. Of the
// older ones it keeps MaxAppliedRevisions, and beyond them those whose
// sync verdict the forge still owes (keep): dropping one would turn its
// verdict into "not applied".
func AppendRevision(revs []string, rev string, keep func(string) bool) []string {
	if len(revs) > 0 && revs[len(revs)-1] == rev {
		return revs
	}
	revs = append(slices.Clone(revs), rev)
	for len(revs) > MaxAppliedRevisions {
		// The oldest of those beyond the newest MaxAppliedRevisions that
		// is owed nothing.
		i := slices.IndexFunc(revs[:len(revs)-MaxAppliedRevisions], func(r string) bool { return !keep(r) })
		if i < 0 {
			break
		}
		revs = slices.Delete(revs, i, i+1)
	}
	return revs
}

// OwesSyncVerdict reports a revision whose sync status the forge last
// acknowledged (or may have) as pending.
func OwesSyncVerdict(gr *v1alpha1.GitRepository) func(string) bool {
	ctx := SyncContext(gr.Namespace, gr.Name)
	return func(rev string) bool {
		return slices.ContainsFunc(gr.Status.CommitStatuses, func(r v1alpha1.CommitStatusRecord) bool {
			return r.Context == ctx && r.Revision == rev && r.State == string(StatePending)
		})
	}
}

// SyncDesired derives the sync commit statuses from a GitRepository's
// status: the verdict (or pending) of the revision last attempted, and a
// verdict for every earlier revision the forge saw pending and no verdict
// for (the forge was down until a newer revision was attempted).
func SyncDesired(gr *v1alpha1.GitRepository) []Desired {
	rev := gr.Status.LastAttemptedRevision
	if rev == "" {
		return nil
	}
	ctx := SyncContext(gr.Namespace, gr.Name)
	var out []Desired
	want := func(r string) func(State, string) {
		return func(s State, desc string) {
			if s != "" {
				out = append(out, Desired{Revision: r, Status: Entry{Context: ctx, State: s, Description: desc}})
			}
		}
	}
	want(rev)(syncVerdict(gr))
	for _, r := range gr.Status.CommitStatuses {
		if r.Context == ctx && r.Revision != rev && r.State == string(StatePending) {
			want(r.Revision)(supersededSync(gr, r.Revision))
		}
	}
	return out
}

// syncVerdict is the sync status of the revision last attempted.
func syncVerdict(gr *v1alpha1.GitRepository) (State, string) {
	for _, typ := range []string{v1alpha1.BuildFailedCondition, v1alpha1.ApplyFailedCondition} {
		if c := conditions.Get(gr.Status.Conditions, typ); c != nil && c.Status == "True" {
			return StateFailure, c.Message
		}
	}
	switch {
	case conditions.IsTrue(gr.Status.Conditions, v1alpha1.ReconcilingCondition):
		return StatePending, "applying to the cluster"
	case gr.Status.LastAppliedRevision == gr.Status.LastAttemptedRevision:
		return StateSuccess, appliedText(gr)
	}
	return "", ""
}

func appliedText(gr *v1alpha1.GitRepository) string {
	n := 0
	if gr.Status.Inventory != nil {
		n = len(gr.Status.Inventory.Entries)
	}
	return fmt.Sprintf("applied to the cluster (%d objects)", n)
}

// supersededSync is the verdict of an earlier revision left pending on
// the forge: success when it was applied, failure when a newer revision
// was attempted before it was.
func supersededSync(gr *v1alpha1.GitRepository, rev string) (State, string) {
	applied := gr.Status.AppliedRevisions
	switch i := slices.Index(applied, rev); {
	case rev == gr.Status.LastAppliedRevision:
		return StateSuccess, appliedText(gr)
	case i >= 0 && i < len(applied)-1:
		return StateSuccess, "applied to the cluster; replaced since by " + shortRevision(applied[i+1])
	}
	return StateFailure, "not applied: superseded by " + shortRevision(gr.Status.LastAttemptedRevision)
}

func shortRevision(rev string) string {
	_, sha, err := v1alpha1.ParseRevision(rev)
	if err != nil {
		return rev
	}
	return v1alpha1.ShortSHA(sha)
}
