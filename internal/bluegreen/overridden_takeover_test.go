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

// A `kubectl edit` of the active child's image moves the image field to
// the kubectl-edit field manager, so the adapter reports it Overridden. A
// later Git commit of a new image is still rolled out: an overridden field
// reads as Git last set it, not as the new commit does. The same holds
// when another client took over every field bg-gitops applied.
func TestAGitChangeOfAFieldAnotherManagerSetStillRollsOut(t *testing.T) {
	for _, tc := range []struct {
		name       string
		image      string
		overridden []string
	}{
		{"kubectl edit of the image", "flink:hotfix", []string{"image"}},
		{"every field taken over", "flink:1.20", []string{"flinkConfiguration.state.savepoints.dir", "flinkConfiguration.taskmanager.numberOfTaskSlots",
			"flinkVersion", "image", "job.jarURI", "job.parallelism", "job.upgradeMode", "jobManager.resource.cpu", "jobManager.resource.memory",
			"serviceAccount", "taskManager.resource.cpu", "taskManager.resource.memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := deployed(t, v1alpha1.UpgradeModeSavepoint)
			ch := w.mustChild(Blue)
			ch.Spec.Image = tc.image
			ch.Overridden = tc.overridden
			ch.Generation++
			ch.ObservedGeneration = ch.Generation
			newImage(w, "flink:1.21", "main@sha1:r2")
			d := w.step()
			if w.status().BlueGreenState == sActiveBlue && w.children[Green] == nil && w.status().Savepoint == nil {
				w.fatalf("Git's new image flink:1.21 (r2) is never rolled out: blue still runs %s, status says active revision %s/target %s; actions %s",
					w.mustChild(Blue).Spec.Image, w.status().ActiveRevision, w.status().TargetRevision, describeActions(d.Actions))
			}
		})
	}
}

// The cut-over to green (r2) is recorded (StatusFirst) but the replica
// stops before it deletes blue, the old colour running r1; then a person
// deletes green. Blue becomes the active deployment, and since it does
// not run r2's spec, r2 is rolled out again from it.
func TestTakingOverTheColourACutOverLeftRollsGitOutAgain(t *testing.T) {
	for _, mode := range []string{v1alpha1.UpgradeModeSavepoint, v1alpha1.UpgradeModeStateless} {
		t.Run(mode, func(t *testing.T) {
			w := deployed(t, mode)
			startTransition(w, mode)
			w.ready(Green)
			w.step()
			w.expectState(sActiveGreen, jRunning)
			w.mustChild(Blue).Deleting = false // the delete never landed
			w.deleteByHand(Green)
			w.gone()
			for i := 0; i < 10; i++ {
				w.step()
				if g := w.children[Green]; g != nil && !g.Deleting && !g.suspendedSpec() && !g.Ready() {
					w.ready(Green)
				}
				if b := w.children[Blue]; b != nil && !b.Deleting && !b.suspendedSpec() && !b.Ready() {
					w.ready(Blue)
				}
				if w.status().Savepoint != nil && w.snaps[w.status().Savepoint.Name] != nil && w.snapshot().State != SnapshotCompleted {
					w.completeSnapshot()
				}
				w.advance(15 * time.Second)
				w.gone()
			}
			st := w.status()
			for _, c := range w.children {
				if !c.Deleting && !c.suspendedSpec() && c.Spec.Image == "flink:1.20.1" {
					return // r2 runs again
				}
			}
			w.fatalf("Git says r2 (flink:1.20.1) but the only job runs %v; status %s/%s active revision %s, condition %v",
				w.childNames(), st.BlueGreenState, st.JobStatus.State, st.ActiveRevision, w.condition(v1alpha1.ReconcilingCondition))
		})
	}
}

// Stateless: r2 cut over from blue to green, and the replica stopped
// before deleting blue, which still runs r1. The rollout window closes; a
// revert to r1's spec (r3) is committed. Blue is the colour the cut-over
// left, not a new colour some decision started: it is not taken up as
// the target of a transition (which would begin outside the window).
func TestTheColourACutOverLeftIsNeverTakenUpAsANewColour(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	startTransition(w, v1alpha1.UpgradeModeStateless)
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	w.mustChild(Blue).Deleting = false // the delete never landed
	w.window = closedWindow
	newImage(w, "flink:1.20", "main@sha1:r3") // revert to r1's spec
	for i := 0; i < 6; i++ {
		d := w.step()
		if w.deletes(d, "orders-green") || w.status().BlueGreenState != sActiveGreen {
			w.fatalf("outside the rollout window, r3 is rolled out by taking up blue (a leftover that was never started for r3): %s/%s, actions %s",
				w.status().BlueGreenState, w.status().JobStatus.State, describeActions(d.Actions))
		}
		if b := w.children[Blue]; b != nil && !b.Deleting && !b.Ready() && !b.suspendedSpec() {
			w.ready(Blue)
		}
		w.advance(15 * time.Second)
	}
}

// A person suspends the active job by hand during an incident (`kubectl
// patch ... job.state: suspended`: another field manager now owns
// job.state). Git then commits a new image. The job state is never
// masked: a change to a suspended child is patched in place, as Plan
// says for any change while the job is suspended, and Git's apply
// resumes it with the new image.
func TestAChangeToAJobSuspendedByHandIsPatchedInPlace(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	b := w.mustChild(Blue)
	b.Spec.Job.State = v1alpha1.JobStateSuspended
	b.Overridden = []string{"job.state"}
	b.Generation++
	b.ObservedGeneration = b.Generation
	b.UpgradeSavepointPath = "/sp/hand"
	w.suspendDone(Blue)
	w.step()
	newImage(w, "flink:1.21", "main@sha1:r2")
	for i := 0; i < 12; i++ {
		w.step()
		for _, c := range w.children {
			if !c.Deleting && !c.suspendedSpec() && !c.Ready() {
				w.ready(c.Color)
			}
		}
		if w.status().Savepoint != nil && w.snaps[w.status().Savepoint.Name] != nil && w.snapshot().State != SnapshotCompleted {
			w.completeSnapshot()
		}
		w.advance(15 * time.Second)
		w.gone()
	}
	for _, c := range w.children {
		if !c.Deleting && c.Spec.Image == "flink:1.21" {
			return
		}
	}
	st := w.status()
	w.fatalf("Git's r2 (flink:1.21) never rolls out to the hand-suspended job: %s/%s %q", st.BlueGreenState, st.JobStatus.State, st.Error)
}
