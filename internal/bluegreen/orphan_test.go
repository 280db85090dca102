/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"reflect"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// orphan is a child of colour c left running, owned by nothing, by the
// deletion of an earlier parent of the name that orphaned it.
func (w *world) orphan(c Color) *Child {
	ch := w.running(c, t0.Add(-time.Hour))
	ch.Unowned = true
	ch.Labels = map[string]string{TypeLabel: string(c)}
	return ch
}

// TestAnOrphanOfThisJobIsAdopted: a parent created over the child an
// orphaning deletion left running first gives it its owner reference (an
// apply of the spec it runs, in a decision of its own), then takes it as
// its active deployment; the job is not restarted.
func TestAnOrphanOfThisJobIsAdopted(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	blue := w.orphan(Blue)
	spec := *blue.Spec.DeepCopy()
	d := w.step()
	if got := w.expectApply(d, "orders-blue"); !reflect.DeepEqual(*got, spec) || d.Actions[0].Child.Revision != blue.Revision {
		w.fatalf("adoption re-specced orders-blue: %+v", got)
	}
	w.expectEvents(d, "OrphanAdopted")
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "Adopting", "adopting FlinkDeployment orders-blue")
	d = w.step()
	w.expectEvents(d, "Adopted")
	w.expectState(sActiveBlue, jRunning)
	if w.mustChild(Blue).JobID != "job-BLUE" || w.lineage["orders-blue"] != 0 {
		w.fatalf("orders-blue not adopted as it runs: %+v", w.mustChild(Blue))
	}
	w.expectNoop(w.step())
}

// TestAnAdoptedOrphanIsRolledToGit: an orphan of this job that runs an
// older image is adopted as it runs, then rolled to the spec as any
// change is (a blue/green transition from a savepoint of it).
func TestAnAdoptedOrphanIsRolledToGit(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.orphan(Blue).Spec.Image = "flink:1.19"
	d := w.step()
	if got := w.expectApply(d, "orders-blue"); got.Image != "flink:1.19" {
		w.fatalf("adoption re-specced orders-blue: image %s", got.Image)
	}
	d = w.step()
	if len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot {
		w.fatalf("want a savepoint of orders-blue, got %s", describeActions(d.Actions))
	}
	w.expectState(v1alpha1.SavepointingBlue, jReconciling)
}

// TestAnOrphanOfAnotherJobIsRefused: an unowned child of the parent's
// child name that does not run its job is never adopted, applied or
// deleted, and no job starts beside it: the parent fails naming it and
// why, once, and starts when it is gone.
func TestAnOrphanOfAnotherJobIsRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(c *Child)
		why    string
	}{
		"another jar":   {func(c *Child) { c.Spec.Job.JarURI = "local:///opt/flink/other.jar" }, "it runs jarURI local:///opt/flink/other.jar, not local:///opt/flink/job.jar"},
		"another class": {func(c *Child) { c.Spec.Job.EntryClass = "com.example.Other" }, "it runs entryClass com.example.Other, not -"},
		"made by hand":  {func(c *Child) { c.Labels = nil }, `its label flink/blue-green-deployment-type is "", not BLUE`},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
			tc.change(w.orphan(Blue))
			d := w.step()
			if len(d.Actions) != 0 {
				w.fatalf("acted on a child it refused: %s", describeActions(d.Actions))
			}
			w.expectEvents(d, "AdoptionRefused")
			want := "FlinkDeployment orders-blue exists, owned by nothing, and is not the job of orders: " + tc.why
			w.expectCondition(v1alpha1.StalledCondition, metav1.ConditionTrue, ReasonRolloutFail, want)
			w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonRolloutFail, want)
			w.expectRequeue(d, 15*time.Second)
			w.expectNoop(w.step())

			delete(w.children, Blue) // a person deleted it
			w.step()
			w.expectState(sToBlue, jReconciling)
		})
	}
}

// TestADeletionThatOrphansLeavesTheChildren: a parent deleted with
// propagationPolicy Orphan neither savepoints nor deletes its children:
// they keep running for an object created again over them. Children the
// garbage collector already orphaned (the orphan finalizer gone) are left
// too.
func TestADeletionThatOrphansLeavesTheChildren(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.step()
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	w.deleteParent()
	w.parent.Finalizers = append(w.parent.Finalizers, metav1.FinalizerOrphanDependents)
	d := w.step()
	if len(d.Actions) != 0 || !d.Finalize {
		w.fatalf("want the finalizer removed and nothing done, got %s finalize=%v", describeActions(d.Actions), d.Finalize)
	}
	w.expectEvents(d, "ChildrenOrphaned")

	w.parent.Finalizers = []string{v1alpha1.FinalSavepointFinalizer}
	w.mustChild(Blue).Unowned = true
	d = w.step()
	if len(d.Actions) != 0 || !d.Finalize {
		w.fatalf("want an orphaned child left alone, got %s finalize=%v", describeActions(d.Actions), d.Finalize)
	}
}
