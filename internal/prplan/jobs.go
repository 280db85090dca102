/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// jobs.go: the live facts of each FlinkBlueGreenDeployment a head adds,
// changes or removes — the colour that runs, a rollout in flight, a closed
// rollout window, manual promotion, the abort deadline, a removal.

package prplan

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/review"
)

// jobCtx is what every job's facts are judged against.
type jobCtx struct {
	window bluegreen.Window
	now    time.Time
	// added are the FlinkBlueGreenDeployments the head adds, by namespace.
	added map[string][]*v1alpha1.FlinkBlueGreenDeployment
}

// jobs reads the live object of each FlinkBlueGreenDeployment of r and
// tells what its live state adds to the plan.
func jobs(ctx context.Context, in Input, r *review.Report, head map[string]*v1alpha1.FlinkBlueGreenDeployment) ([]Job, error) {
	jc, err := newJobCtx(in, r, head)
	if err != nil {
		return nil, err
	}
	var out []Job
	for _, o := range r.Objects {
		if o.Deployment == nil {
			continue
		}
		live, err := readFBGD(ctx, in.Reader, o.Namespace, o.Name)
		if err != nil {
			return nil, err
		}
		j := Job{Namespace: o.Namespace, Name: o.Name}
		if runs(live) {
			j.Running = live.Status.ActiveDeployment
		}
		var active *bluegreen.Child
		if o.Change == review.Changed {
			if active, err = judgeByActive(ctx, in, o.Deployment, live, head[o.ID()]); err != nil {
				j.add("not judged against what %s runs: %s", live.Status.ActiveDeployment, err)
			}
		}
		j.Action = o.Deployment.Action
		switch o.Change {
		case review.Changed:
			jc.changed(&j, o.Deployment, live, head[o.ID()], active)
		case review.Removed:
			jc.removed(&j, live)
		case review.Added:
			jc.addedJob(&j, o.Deployment, head[o.ID()])
		}
		out = append(out, j)
	}
	return out, nil
}

func newJobCtx(in Input, r *review.Report, head map[string]*v1alpha1.FlinkBlueGreenDeployment) (*jobCtx, error) {
	jc := &jobCtx{now: in.Now, window: bluegreen.Window{Open: true}, added: map[string][]*v1alpha1.FlinkBlueGreenDeployment{}}
	if gr := in.GitRepository; gr != nil {
		w, err := bluegreen.WindowState(gr.Spec.RolloutWindows, in.Now)
		if err != nil {
			return nil, fmt.Errorf("gitrepository %s/%s: %w", gr.Namespace, gr.Name, err)
		}
		jc.window = w
	}
	for _, o := range r.Objects {
		if o.Deployment != nil && o.Change == review.Added && head[o.ID()] != nil {
			jc.added[o.Namespace] = append(jc.added[o.Namespace], head[o.ID()])
		}
	}
	return jc, nil
}

// judgeByActive replaces pl with the controller's plan: the change judged
// against the spec the active child runs (bluegreen.BaseOf), not the live
// parent's spec, which may hold a change not rolled out yet (a closed
// window, a transition under way or aborted). It returns the active child,
// nil when none runs or none could be read.
func judgeByActive(ctx context.Context, in Input, pl *review.Plan, live, head *v1alpha1.FlinkBlueGreenDeployment) (*bluegreen.Child, error) {
	if in.ObserveChild == nil || live == nil || head == nil || live.Status.ActiveDeployment == "" {
		return nil, nil
	}
	color := bluegreen.Green
	if live.Status.ActiveDeployment == bluegreen.ChildName(live.Name, bluegreen.Blue) {
		color = bluegreen.Blue
	}
	ch, err := in.ObserveChild(ctx, in.Reader, live, color)
	if err != nil || ch == nil || ch.Deleting {
		return nil, err
	}
	base := bluegreen.BaseOf(&head.Spec, bluegreen.ParseLastSpec(live.Status.LastReconciledSpec), ch)
	check := pl.Check
	*pl = *review.SpecPlan(base, &live.Spec, &head.Spec)
	pl.Check = check
	return ch, nil
}

// readFBGD reads a live FlinkBlueGreenDeployment; nil when absent.
func readFBGD(ctx context.Context, c client.Reader, ns, name string) (*v1alpha1.FlinkBlueGreenDeployment, error) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read flinkbluegreendeployment %s/%s: %w", ns, name, err)
	}
	return p, nil
}

// newColour reports the actions that start a new colour beside the one
// that runs (rollout windows hold exactly these).
func newColour(a review.Action) bool {
	switch a {
	case review.ActionTransitionSavepoint, review.ActionTransitionStateless, review.ActionSavepointRedeploy:
		return true
	}
	return false
}

// runs reports a live FlinkBlueGreenDeployment whose active job runs (not
// suspended).
func runs(p *v1alpha1.FlinkBlueGreenDeployment) bool {
	return p != nil && p.Status.ActiveDeployment != "" && !p.Spec.Template.Spec.Suspended()
}

// otherChild is the child that is not the active one.
func otherChild(p *v1alpha1.FlinkBlueGreenDeployment) string {
	if p.Status.ActiveDeployment == bluegreen.ChildName(p.Name, bluegreen.Blue) {
		return bluegreen.ChildName(p.Name, bluegreen.Green)
	}
	return bluegreen.ChildName(p.Name, bluegreen.Blue)
}
