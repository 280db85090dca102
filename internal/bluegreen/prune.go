/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// prune.go: PrunableSnapshots, which finished FlinkStateSnapshots of a
// deployment may be deleted, and SavepointPath, which normalises "file:" paths.

package bluegreen

import (
	"sort"
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// DefaultKeepSnapshots is how many finished FlinkStateSnapshots of each
// FlinkBlueGreenDeployment are kept beyond those still in use
// (--keep-snapshots).
const DefaultKeepSnapshots = 3

// OwnSnapshot is a FlinkStateSnapshot bg-gitops created to savepoint a
// job of one FlinkBlueGreenDeployment: owned by it, labelled with its
// name, not a state record (see v1alpha1.StateRecordLabel), which outlives
// the FlinkBlueGreenDeployment and is never pruned.
type OwnSnapshot struct {
	Name, State, Path string
	Created           time.Time
	// UID and ResourceVersion are the deletion's preconditions.
	UID, ResourceVersion string
}

func (s OwnSnapshot) finished() bool {
	switch s.State {
	case SnapshotCompleted, SnapshotFailed, SnapshotAbandoned:
		return true
	}
	return false
}

// PrunableSnapshots is what of snaps, the FlinkStateSnapshots bg-gitops
// created for p, may be deleted, keeping keep of them (keep <= 0: every
// one). The adapter asks only while p rests in an ACTIVE state. Kept,
// whatever keep says: a snapshot not finished (in progress, or never
// picked up), and the one a child's job restored from (its
// spec.job.initialSavepointPath) or the template names (a rollback
// --from-savepoint to come). Of the rest, the keep newest are kept, the
// last rollout's among them, failed or not: they are the savepoints
// `bg-gitops rollback --from-savepoint` offers for the last rollouts (it
// reads their paths from status.history: the savepoint taken of each
// rollout's job when the next rollout replaced it). Deleting a
// FlinkStateSnapshot bg-gitops created never deletes the savepoint itself
// (disposeOnDelete: false): a path in the history still restores.
func PrunableSnapshots(p *v1alpha1.FlinkBlueGreenDeployment, children []*Child, snaps []OwnSnapshot, keep int) []OwnSnapshot {
	if keep <= 0 {
		return nil
	}
	inUse := restoredPaths(append([]*Child{{Spec: p.Spec.Template.Spec}}, children...))
	var old []OwnSnapshot
	for _, s := range snaps {
		if !s.finished() || s.Path != "" && inUse[SavepointPath(s.Path)] {
			continue
		}
		old = append(old, s)
	}
	sort.SliceStable(old, func(i, j int) bool { return old[i].Created.After(old[j].Created) })
	if len(old) <= keep {
		return nil
	}
	return old[keep:]
}

// restoredPaths are the savepoints the children's jobs restored from
// (or, for the template, will).
func restoredPaths(children []*Child) map[string]bool {
	in := map[string]bool{}
	for _, c := range children {
		if c != nil && c.Spec.Job != nil && c.Spec.Job.InitialSavepointPath != "" {
			in[SavepointPath(c.Spec.Job.InitialSavepointPath)] = true
		}
	}
	return in
}

// SavepointPath is a local path without its "file:" scheme, in either of
// the spellings Flink accepts ("file:/sp/x", "file:///sp/x"), so that a
// snapshot's status.path and a child's initialSavepointPath compare.
func SavepointPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return strings.TrimPrefix(p, "file:")
}
