/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// orphan.go: children the parent does not own — an orphaning deletion,
// refusing a child that is not this parent's job, and claiming one that is.

package bluegreen

import (
	"fmt"
	"slices"
	"strings"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Orphaned children: a FlinkBlueGreenDeployment deleted with
// propagationPolicy Orphan (kubectl delete --cascade=orphan) leaves its
// children running, and the garbage collector removes their owner
// references. A FlinkBlueGreenDeployment created again over them adopts
// those that run its job, and refuses, leaving it as it is, one that does
// not: it is never deleted nor overwritten.

// orphaning reports a deletion that orphans the children: the API server
// put the orphan finalizer on the parent.
func (d *decider) orphaning() bool {
	return slices.Contains(d.p.Finalizers, metav1.FinalizerOrphanDependents)
}

// orphanChildren ends a deletion that orphans the children: they keep
// running as they are, with no final savepoint and no record (the job
// goes on), for an object created again over them to adopt. A transition
// under way ends, the colour that was active recorded as active.
func (d *decider) orphanChildren() {
	d.end(v1alpha1.RolloutAborted, "the FlinkBlueGreenDeployment is being deleted")
	d.setJob(v1alpha1.JobReconciling, "") // the object no longer reports on its job
	if s := d.st.BlueGreenState; s.InProgress() {
		c := stateColour(s)
		if s.Transitioning() {
			c = c.Other()
		}
		d.st.BlueGreenState, d.st.ActiveDeployment = activeState(c), d.childName(c)
		d.resetMarkers()
	}
	var names []string
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c != nil && !c.Deleting {
			names = append(names, c.Name)
		}
	}
	if len(names) > 0 {
		d.event(false, "ChildrenOrphaned", "deleted with propagationPolicy Orphan: %s keep running, owned by nothing, with no final savepoint",
			strings.Join(names, ", "))
	}
	d.progressing("Deleting", "orphaning the children of %s", d.p.Name)
	d.out.Finalize = true
}

// forgetUnowned drops the unowned children from a deletion's view: the
// garbage collector orphaned them (the orphan finalizer may already be
// gone), or they were never this parent's. A deletion leaves them alone.
func (d *decider) forgetUnowned() {
	if d.in.Blue != nil && d.in.Blue.Unowned {
		d.in.Blue = nil
	}
	if d.in.Green != nil && d.in.Green.Unowned {
		d.in.Green = nil
	}
}

// refused is the child refusedChild names.
func (d *decider) refused() *Child {
	c, _ := d.refusedChild()
	return c
}

// refusedChild is the first unowned child that is not this parent's job,
// and why; nil when there is none.
func (d *decider) refusedChild() (*Child, string) {
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c == nil || !c.Unowned {
			continue
		}
		if why := d.notThisJob(c); why != "" {
			return c, why
		}
	}
	return nil, ""
}

// notThisJob says why an unowned child is not the job this parent runs,
// "" when it is. Its name binds it to the parent's name and its colour
// (ChildName); the colour label says a blue/green deployment made it; the
// job is the program Git names, spec.template.spec.job's jarURI and
// entryClass. What a rollout changes (the image, parallelism, the
// configuration, a scale by hand) is not compared: once adopted, the
// child is rolled to the spec as any change is.
func (d *decider) notThisJob(c *Child) string {
	if got := c.Labels[TypeLabel]; got != string(c.Color) {
		return fmt.Sprintf("its label %s is %q, not %s: no blue/green deployment made it", TypeLabel, got, c.Color)
	}
	want, got := d.spec.Template.Spec.Job, c.Spec.Job
	switch {
	case got == nil:
		return "it runs no job"
	case got.JarURI != want.JarURI:
		return fmt.Sprintf("it runs jarURI %s, not %s", orDash(got.JarURI), orDash(want.JarURI))
	case got.EntryClass != want.EntryClass:
		return fmt.Sprintf("it runs entryClass %s, not %s", orDash(got.EntryClass), orDash(want.EntryClass))
	}
	return ""
}

// refuseAdoption leaves an unowned child that is not this parent's job as
// it is: nothing is applied, deleted or started beside it (its name is
// the one this parent's colour needs). The parent fails, saying which
// child and why, and looks again every reschedule interval (no watch
// reports a child it does not own).
func (d *decider) refuseAdoption(c *Child, why string) {
	msg := fmt.Sprintf("FlinkDeployment %s exists, owned by nothing, and is not the job of %s: %s. It is left as it is: delete or rename it, or make spec.template.spec.job name the job it runs",
		c.Name, d.p.Name, why)
	if d.st.Error != msg {
		d.event(true, "AdoptionRefused", "%s", msg)
	}
	d.fail(msg)
	d.requeue(d.t.interval)
}

// unowned is an unowned child, nil when there is none.
func (d *decider) unowned() *Child {
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c != nil && c.Unowned && !c.Deleting {
			return c
		}
	}
	return nil
}

// claimUnowned gives the unowned children, which run this parent's job
// (see refusedChild), the parent's owner reference, in a decision of its
// own: an apply of the spec and revision each runs, to which the adapter
// adds the owner reference and the parent's labels. No job is touched.
// The next decision finds them the parent's, and takes them up as
// children found without status (adopt) or as the status says.
func (d *decider) claimUnowned() {
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c == nil || !c.Unowned || c.Deleting {
			continue
		}
		d.apply(&ChildSpec{Name: c.Name, Color: c.Color, Spec: *c.Spec.DeepCopy(), Revision: c.Revision})
		d.event(true, "OrphanAdopted", "FlinkDeployment %s, owned by nothing, runs the job of %s: it is adopted as it runs", c.Name, d.p.Name)
		d.progressing("Adopting", "adopting FlinkDeployment %s, owned by nothing, which runs this job", c.Name)
	}
	d.requeue(d.t.interval)
}
