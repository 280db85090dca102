/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// A commit that lands while the savepoint of the previous one is taken is
// the one rolled out once the savepoint completes (savepointDone starts
// the new colour from d.spec). The entry in progress must name that
// revision: otherwise history says r2 went live (Succeeded) while the job
// runs r3, `rollback --to r2` picks a rollout of a spec that never ran, and
// history disagrees with liveRevisions and the commit statuses (r2
// superseded).
func TestHistoryOfASpecChangedWhileTheSavepointIsTaken(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", r2)
	w.step()
	w.expectState(sSpBlue, jReconciling)
	newImage(w, "flink:1.20.2", r3)
	w.step() // still savepointing
	path := w.completeSnapshot()
	w.step()
	w.expectState(sToGreen, jReconciling)
	if g := w.mustChild(Green); g.Revision != r3 || g.Spec.Image != "flink:1.20.2" {
		w.fatalf("green runs %s %s", g.Revision, g.Spec.Image)
	}
	if r := w.newest(); r.Revision != r3 {
		w.fatalf("the rollout in progress deploys %s to %s; history says it rolls out %s: %+v", r3, green, r.Revision, w.status().History)
	}
	w.ready(Green)
	w.step()
	w.gone()
	w.step()
	st := w.status()
	if st.ActiveRevision != r3 {
		w.fatalf("active %s", st.ActiveRevision)
	}
	for _, r := range st.History {
		if r.Revision == r2 && r.Outcome == v1alpha1.RolloutSucceeded {
			w.fatalf("history says %s succeeded; it never ran (liveRevisions %v): %+v", r2, st.LiveRevisions, st.History)
		}
	}
	_ = path
}

// RolloutBound adds four timers that each parse up to ~292 years: their
// sum wraps around (two of 100000 days give a negative bound; three can
// give a small positive one). The CLI's --timeout auto is built on it.
func TestRolloutBoundDoesNotOverflow(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		cfg := map[string]string{}
		keys := []string{v1alpha1.AbortGracePeriodKey, v1alpha1.SavepointTimeoutKey, v1alpha1.DeploymentDeletionDelayKey, v1alpha1.RescheduleIntervalKey}
		for _, k := range keys[:n] {
			cfg[k] = "100000 d"
		}
		d, err := RolloutBound(&v1alpha1.FlinkBlueGreenDeploymentSpec{Configuration: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if d < 100000*24*time.Hour {
			t.Errorf("%d timers of 100000 days: bound %s", n, d)
		}
	}
}

// A commit during a stateful transition deletes the target and takes a
// fresh savepoint of the old colour. When the status write of that
// decision is lost, the target is found missing on the status of the old
// revision; the restart must still roll out the new commit from a fresh
// savepoint, history must name that revision, and no revision may
// supersede itself.
func TestHistoryOfASpecChangedDuringATransitionWhoseStatusWriteIsLost(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	first := startTransition(w, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.2", r3)
	w.dropNext = true
	w.step() // deletes green, asks for a fresh savepoint; the status write is lost
	w.gone()
	w.step() // green missing on the old status: a fresh savepoint again
	w.expectState(sSpBlue, jReconciling)
	if r := w.newest(); r.Revision != r3 || r.Outcome != v1alpha1.RolloutInProgress {
		w.fatalf("the restart is not the rollout of %s: %+v", r3, w.status().History)
	}
	fresh := w.completeSnapshot()
	w.step()
	g := w.mustChild(Green)
	if g.Revision != r3 || g.Spec.Job.InitialSavepointPath != fresh || fresh == first {
		w.fatalf("green restarted with %s from %q, want %s from the fresh savepoint %q (first %q)",
			g.Revision, g.Spec.Job.InitialSavepointPath, r3, fresh, first)
	}
	w.ready(Green)
	w.step()
	w.gone()
	w.step()
	w.expectState(sActiveGreen, jRunning)
	for _, r := range w.status().History {
		if r.Revision == r3 && r.Outcome != v1alpha1.RolloutSucceeded {
			w.fatalf("%s did not end as the one success: %+v", r3, w.status().History)
		}
	}
}
