/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestRandomSequences drives Decide through random worlds; the world checks
// the invariants on every decision (see invariants_test.go).
func TestRandomSequences(t *testing.T) {
	runs, steps := 500, 60 // the explorer's random walks (explore_test.go) add faults
	if testing.Short() {
		runs = 100
	}
	first := int64(0)
	if s := os.Getenv("BG_SEED"); s != "" {
		first, _ = strconv.ParseInt(s, 10, 64)
		runs = int(first) + 1
	}
	for seed := first; seed < int64(runs); seed++ {
		r := rand.New(rand.NewSource(seed))
		mode := modes[r.Intn(len(modes))]
		w := newWorld(t, mode)
		w.config(v1alpha1.DeploymentDeletionDelayKey, []string{"0", "5 s"}[r.Intn(2)])
		if r.Intn(3) == 0 {
			manual(w)
		}
		w.history = append(w.history, fmt.Sprintf("seed %d mode %s", seed, mode))
		for i := 0; i < steps; i++ {
			randomEvent(r, w, i)
			w.step()
		}
	}
}

func randomEvent(r *rand.Rand, w *world, i int) {
	note := func(s string) { w.history = append(w.history, "  ~ "+s) }
	rev := fmt.Sprintf("main@sha1:%d", i)
	switch r.Intn(16) {
	case 0:
		note("new image")
		newImage(w, fmt.Sprintf("flink:%d", r.Intn(4)), rev)
	case 1:
		note("patch")
		w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
			s.Template.Spec.Job.AllowNonRestoredState = ptr(r.Intn(2) == 0)
		}, rev)
	case 2:
		note("suspend/resume")
		if r.Intn(2) == 0 {
			suspend(w, rev)
		} else {
			resume(w, rev)
		}
	case 3:
		note("redeploy nonce / upgrade mode / top-level")
		w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
			switch r.Intn(3) {
			case 0:
				s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(r.Intn(3)))
			case 1:
				s.Template.Spec.Job.UpgradeMode = modes[r.Intn(len(modes))]
			default:
				s.Configuration["custom"] = rev
			}
		}, rev)
	case 4, 5, 6:
		progressChildren(r, w, note)
	case 7, 8:
		progressSnapshot(r, w, note)
	case 9:
		d := time.Duration(r.Intn(20)) * time.Minute
		note("clock +" + d.String())
		w.advance(d)
	case 10:
		if c := randomChild(r, w); c != nil && !c.Deleting && r.Intn(3) == 0 {
			note("delete by hand " + c.Name)
			w.deleteByHand(c.Color)
		}
	case 11:
		note("deletions complete")
		w.gone()
	case 12:
		key := []string{v1alpha1.PromoteRequestedAtAnnotation, v1alpha1.AbortRequestedAtAnnotation, v1alpha1.RetryRequestedAtAnnotation}[r.Intn(3)]
		note("annotate " + key)
		w.annotate(key, rev)
	case 13:
		note("window closed/open")
		if w.window.Open {
			w.window = Window{OpensAt: w.now.Add(time.Hour), Description: "waiting for rollout window"}
		} else {
			w.window = Window{Open: true}
		}
	case 14:
		note("crash before the status write")
		w.dropNext = true
	default:
		w.advance(time.Duration(r.Intn(30)) * time.Second)
	}
}

func randomChild(r *rand.Rand, w *world) *Child {
	c := []Color{Blue, Green}[r.Intn(2)]
	return w.children[c]
}

func progressChildren(r *rand.Rand, w *world, note func(string)) {
	c := randomChild(r, w)
	if c == nil || c.Deleting {
		return
	}
	switch {
	case c.suspendedSpec():
		note("suspended " + c.Name)
		w.suspendDone(c.Color)
	case r.Intn(4) == 0:
		note("failed " + c.Name)
		w.failChild(c.Color)
	case c.LifecycleState == "CREATED" || c.LifecycleState == "UPGRADING":
		note("deployed " + c.Name)
		c.LifecycleState, c.JobState = "DEPLOYED", "RECONCILING"
	default:
		note("ready " + c.Name)
		w.ready(c.Color)
	}
}

func progressSnapshot(r *rand.Rand, w *world, note func(string)) {
	sp := w.status().Savepoint
	if sp == nil || w.snaps[sp.Name] == nil {
		return
	}
	s := w.snaps[sp.Name]
	if s.State != SnapshotTriggerPending && s.State != SnapshotInProgress {
		return // outcomes are final
	}
	switch r.Intn(6) {
	case 0:
		note("snapshot failed")
		s.State, s.Error = SnapshotFailed, "boom"
	case 1:
		note("snapshot abandoned")
		s.State = SnapshotAbandoned
	case 2:
		note("snapshot in progress")
		s.State = SnapshotInProgress
	default:
		note("snapshot completed")
		w.completeSnapshot()
	}
}
