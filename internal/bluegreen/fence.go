/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// fence.go: the fencing side of the adapter contract — StatusFirst (write
// status before actions) and Overdue (a state's deadline that has passed).

package bluegreen

import (
	"fmt"
	"time"
)

// StatusFirst reports whether the adapter records dec's status before it
// runs dec's actions: a decision that deletes a child or applies one (a
// suspend, an in-place patch, a re-spec, a new colour) is written first,
// with an optimistic lock on the status it was decided from. A replica
// deciding on a status another replica has since changed loses that
// write and acts on nothing; a replica that finds the recorded status
// with its actions undone completes them (Decide on that status asks for
// them again). A decision that asks for a savepoint (CreateSnapshot) is
// written first too: the snapshot is trusted only by the uid its create
// returns, which the adapter records in the status write after the
// actions (see reconcile's createSnapshot), and a replica that finds a
// snapshot of the name it would ask for, without that uid, cannot tell it
// from one planted under the name. Written first, only the replica whose
// write won creates it; a replica that stalls before its create lands
// finds it done by another (AlreadyExists, harmless: its status write
// after conflicts). Only a loss between the create and the write after
// leaves a snapshot whose uid is unknown (the rollout then fails with
// SnapshotNotOurs, the old colour running).
func StatusFirst(in Input, dec Decision) bool {
	for _, a := range dec.Actions {
		if a.Type == DeleteChild || a.Type == ApplyChild {
			return true
		}
		if a.Type == CreateSnapshot {
			return true
		}
	}
	return false
}

// Observed is the observed child named name, nil when there is none.
func (in Input) Observed(name string) *Child {
	for _, c := range []*Child{in.Blue, in.Green} {
		if c != nil && c.Name == name {
			return c
		}
	}
	return nil
}

// Overdue names the deadline of the state in.Parent is in that has
// passed ("" when none has): the savepoint timeout while savepointing,
// the abort deadline during a transition. An action that fails with an
// error retrying might fix (a 5xx, a timeout, throttling, an unreachable
// admission webhook) is retried until then; once overdue, the adapter
// decides again with the failure as a Rejection with Lasting set, and the
// rollout ends as that deadline says, the running colour kept.
func Overdue(in Input) string {
	st := &in.Parent.Status
	t, err := parseTimers(in.Parent.Spec.Configuration)
	if err != nil {
		return ""
	}
	switch {
	case st.BlueGreenState.Savepointing() && st.Savepoint != nil && st.Savepoint.TriggerTimestamp != nil:
		if passed(in.Now, st.Savepoint.TriggerTimestamp.Add(t.savepointTimeout)) {
			return fmt.Sprintf("the savepoint timeout (%s)", t.savepointTimeout)
		}
	case st.BlueGreenState.Transitioning() && st.DeploymentReadyTimestamp == nil:
		// (A ready target, waiting for the deletion delay or a
		// promotion, has no deadline.)
		if st.AbortTimestamp != nil && passed(in.Now, st.AbortTimestamp.Time) {
			return fmt.Sprintf("the abort deadline (%s)", st.AbortTimestamp.UTC().Format(time.RFC3339))
		}
		// A new colour is never started from a savepoint that aged.
		if sp := st.Savepoint; sp != nil && sp.Path != "" && sp.TriggerTimestamp != nil && passed(in.Now, sp.TriggerTimestamp.Add(t.savepointTimeout)) {
			return fmt.Sprintf("the savepoint timeout (%s)", t.savepointTimeout)
		}
	}
	return ""
}

func passed(now, deadline time.Time) bool { return !now.Before(deadline) }
