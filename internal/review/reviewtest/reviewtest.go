/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package reviewtest holds `bg-gitops diff` to its promise, for the tests of
// diff and of the command line: the action it announces for a
// FlinkBlueGreenDeployment change is what the controller's decision does.
package reviewtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/review"
)

// Effect is what a decision does to the world, seen from outside.
type Effect string

// Effects.
const (
	Nothing     Effect = "no action, ACTIVE_BLUE"
	Savepoint   Effect = "savepoint of blue, then green started from it"
	NewColour   Effect = "green started from spec.template, blue keeps running"
	PatchBlue   Effect = "blue patched in place"
	SuspendBlue Effect = "blue suspended in place"
	ResumeBlue  Effect = "blue resumed in place"
)

// promised is the effect each announced action stands for.
var promised = map[review.Action]Effect{
	review.ActionNothing:             Nothing,
	review.ActionTransitionSavepoint: Savepoint,
	review.ActionTransitionStateless: NewColour,
	review.ActionSavepointRedeploy:   NewColour,
	review.ActionPatch:               PatchBlue,
	review.ActionSuspend:             SuspendBlue,
	review.ActionResume:              ResumeBlue,
}

const (
	parent        = "job"
	savepointPath = "s3://savepoints/taken-by-the-test"
)

// Check compares what `bg-gitops diff` announces for a
// FlinkBlueGreenDeployment changed from base to head with what the
// controller does (ControllerEffect). It returns the announced action, and
// an error when they disagree.
func Check(base, head *unstructured.Unstructured) (review.Action, error) {
	r, err := review.Compare([]*unstructured.Unstructured{base}, []*unstructured.Unstructured{head})
	if err != nil {
		return "", err
	}
	var announced review.Action = review.ActionNothing
	for _, o := range r.Objects {
		if o.Deployment != nil {
			announced = o.Deployment.Action
		}
	}
	b, h, err := specs(base, head)
	if err != nil {
		return announced, err
	}
	did, err := ControllerEffect(b, h)
	if err != nil {
		return announced, err
	}
	if want, ok := promised[announced]; !ok || want != did {
		return announced, fmt.Errorf("diff announces %q (%s), the controller does: %s", announced, want, did)
	}
	return announced, nil
}

func specs(base, head *unstructured.Unstructured) (b, h *v1alpha1.FlinkBlueGreenDeploymentSpec, err error) {
	var pb, ph v1alpha1.FlinkBlueGreenDeployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(base.Object, &pb); err != nil {
		return nil, nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(head.Object, &ph); err != nil {
		return nil, nil, err
	}
	return &pb.Spec, &ph.Spec, nil
}

// ControllerEffect runs bluegreen.Decide on a parent in ACTIVE_BLUE whose
// blue child runs base (ready, or suspended if base suspends the job) after
// its spec changed to head, and tells what the decision does. A savepoint
// is completed and the next decision must start green from it.
func ControllerEffect(base, head *v1alpha1.FlinkBlueGreenDeploymentSpec) (Effect, error) {
	w, err := newWorld(base, head)
	if err != nil {
		return "", err
	}
	dec, err := bluegreen.Decide(w.in)
	if err != nil {
		return "", err
	}
	if len(dec.Actions) == 0 && dec.Status.BlueGreenState == v1alpha1.ActiveBlue {
		return Nothing, nil
	}
	if len(dec.Actions) != 1 {
		return "", fmt.Errorf("unexpected decision: %s", describe(dec))
	}
	a := dec.Actions[0]
	switch {
	case a.Type == bluegreen.CreateSnapshot && dec.Status.BlueGreenState == v1alpha1.SavepointingBlue:
		return w.savepointDone(dec)
	case a.Type == bluegreen.ApplyChild && a.Child.Color == bluegreen.Green:
		return NewColour, w.checkGreen(dec, w.templatePath())
	case a.Type == bluegreen.ApplyChild && a.Child.Color == bluegreen.Blue:
		return w.inPlace(dec)
	}
	return "", fmt.Errorf("unexpected decision: %s", describe(dec))
}

// world is the input of the first decision.
type world struct {
	in   bluegreen.Input
	base *v1alpha1.FlinkBlueGreenDeploymentSpec
	head *v1alpha1.FlinkBlueGreenDeploymentSpec
}

func newWorld(base, head *v1alpha1.FlinkBlueGreenDeploymentSpec) (*world, error) {
	if base.Template.Spec.Job == nil || head.Template.Spec.Job == nil {
		return nil, errors.New("both specs need spec.template.spec.job")
	}
	last, err := json.Marshal(map[string]any{"spec": base})
	if err != nil {
		return nil, err
	}
	blue := &bluegreen.Child{
		Name: bluegreen.ChildName(parent, bluegreen.Blue), Color: bluegreen.Blue, Spec: *base.Template.Spec.DeepCopy(),
		Revision: "main@sha1:base", LifecycleState: bluegreen.LifecycleStable, JobState: bluegreen.JobRunning,
		JobID: "job-1", Generation: 1, ObservedGeneration: 1, Created: time.Unix(0, 0),
	}
	job := v1alpha1.JobRunning
	if base.Template.Spec.Suspended() {
		blue.LifecycleState, blue.JobState, job = bluegreen.LifecycleSuspended, "SUSPENDED", v1alpha1.JobSuspended
	}
	p := &v1alpha1.FlinkBlueGreenDeployment{Spec: *head.DeepCopy()}
	p.Name, p.Namespace, p.Generation = parent, "ns", 2
	p.Annotations = map[string]string{v1alpha1.RevisionAnnotation: "pr@sha1:head"}
	p.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{
		ObservedGeneration: 1, BlueGreenState: v1alpha1.ActiveBlue, ActiveDeployment: blue.Name,
		ActiveRevision: blue.Revision, LastReconciledSpec: string(last), JobStatus: v1alpha1.JobStatus{State: job},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &world{in: bluegreen.Input{Parent: p, Blue: blue, Window: bluegreen.Window{Open: true}, Now: now},
		base: base, head: head}, nil
}

func (w *world) templatePath() string { return w.head.Template.Spec.Job.InitialSavepointPath }

// savepointDone completes the snapshot of the first decision: the next
// decision must start green from it.
func (w *world) savepointDone(first bluegreen.Decision) (Effect, error) {
	snap := first.Actions[0].Snapshot
	if snap.JobName != w.in.Blue.Name {
		return "", fmt.Errorf("savepoint of %s, not of the active blue", snap.JobName)
	}
	in := w.in
	in.Parent = in.Parent.DeepCopy()
	in.Parent.Status = first.Status
	in.Snapshot = &bluegreen.Snapshot{Name: snap.Name, State: bluegreen.SnapshotCompleted, Path: savepointPath}
	in.Now = in.Now.Add(time.Second)
	next, err := bluegreen.Decide(in)
	if err != nil {
		return "", err
	}
	if len(next.Actions) != 1 || next.Actions[0].Type != bluegreen.ApplyChild || next.Actions[0].Child.Color != bluegreen.Green {
		return "", fmt.Errorf("savepoint completed, then unexpected decision: %s", describe(next))
	}
	return Savepoint, w.checkGreen(next, savepointPath)
}

// checkGreen: green runs head's template from path while blue keeps
// running.
func (w *world) checkGreen(dec bluegreen.Decision, path string) error {
	want := w.head.Template.Spec.DeepCopy()
	want.Job.InitialSavepointPath = path
	want.Ingress = bluegreen.ChildIngress(want.Ingress, bluegreen.Green)
	if got := dec.Actions[0].Child.Spec; !reflect.DeepEqual(got, *want) {
		return fmt.Errorf("green started with %+v, want the head template from %q", got.Job, path)
	}
	if dec.Status.BlueGreenState != v1alpha1.TransitioningToGreen || dec.Status.ActiveDeployment != w.in.Blue.Name {
		return fmt.Errorf("green started, but status %s with active %q", dec.Status.BlueGreenState, dec.Status.ActiveDeployment)
	}
	return nil
}

// inPlace names an in-place change of blue by what it does to the job.
func (w *world) inPlace(dec bluegreen.Decision) (Effect, error) {
	applied := dec.Actions[0].Child.Spec
	want := w.head.Template.Spec.DeepCopy()
	want.Job.InitialSavepointPath = applied.Job.InitialSavepointPath
	want.Ingress = bluegreen.ChildIngress(want.Ingress, bluegreen.Blue)
	if !reflect.DeepEqual(applied, *want) || dec.Status.BlueGreenState != v1alpha1.TransitioningToBlue {
		return "", fmt.Errorf("blue changed, but not to the head template: %s", describe(dec))
	}
	was, is := w.base.Template.Spec.Suspended(), applied.Suspended()
	switch {
	case !was && is:
		return SuspendBlue, nil
	case was && !is:
		return ResumeBlue, nil
	}
	return PatchBlue, nil
}

func describe(dec bluegreen.Decision) string {
	s := string(dec.Status.BlueGreenState) + ":"
	for _, a := range dec.Actions {
		switch a.Type {
		case bluegreen.ApplyChild:
			s += " apply " + a.Child.Name
		case bluegreen.DeleteChild:
			s += " delete " + a.ChildName
		case bluegreen.CreateSnapshot:
			s += " snapshot of " + a.Snapshot.JobName
		}
	}
	return s
}
