/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// prplan.go: Plan, what a pull request's head will do to the running jobs —
// the head compared with the live objects, a server-side dry-run of every
// object as the applying identity, and each FlinkBlueGreenDeployment's plan
// with what its live state adds; Result, its outcome, summary and reports.

package prplan

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/status"
)

// Input of Plan.
type Input struct {
	// GitRepository is the live object whose pull request is planned.
	GitRepository *v1alpha1.GitRepository
	// PullRequest is the pull request (Number, HeadSHA, Title, Author).
	PullRequest status.PullRequest
	// Head are the objects rendered from the head, finished as the
	// controller finishes them before an apply (target namespace,
	// bggitops.dev/revision and bggitops.dev/source annotations).
	Head []*unstructured.Unstructured
	// HeadRevision is <ref>@sha1:<hex> of the head.
	HeadRevision string
	// Applier dry-runs as the applying identity (the GitRepository's
	// ServiceAccount, impersonated). Nothing is ever written through it.
	Applier client.Client
	// Confined and Check are the apply's (apply.Options): a confined
	// GitRepository writes only namespaced objects of its own namespace,
	// and Check looks further than the dry-run (the accounts a job may run
	// as, the Ingress policy). Without them a plan would accept what the
	// apply refuses.
	Confined bool
	Check    func(context.Context, client.Client, *unstructured.Unstructured) error
	// Reader reads the live objects: FlinkBlueGreenDeployments, their
	// children and snapshots, and what the inventory lists.
	Reader client.Reader
	// Now is the time rollout windows and deadlines are judged at.
	Now time.Time
	// CheckChild is the controller's check of a FlinkBlueGreenDeployment's
	// child (reconcile.CheckChild), asked through Applier; nil: not
	// checked against a cluster.
	CheckChild CheckChildFunc
	// ObserveChild reads a colour's FlinkDeployment of a live
	// FlinkBlueGreenDeployment as the controller observes it
	// (reconcile.ObserveChild); a change is judged against what the
	// active one runs. Nil: against the live spec.
	ObserveChild func(ctx context.Context, c client.Reader, p *v1alpha1.FlinkBlueGreenDeployment, color bluegreen.Color) (*bluegreen.Child, error)
}

// Result is a plan.
type Result struct {
	// Report compares the live objects (base) with the head; each
	// FlinkBlueGreenDeployment's Deployment is bluegreen's plan.
	Report *review.Report `json:"report"`
	// Jobs: what the live state adds, per FlinkBlueGreenDeployment that
	// the head adds, changes or removes.
	Jobs []Job `json:"jobs"`
	// Refused: the objects the API server refused in the dry-run, with its
	// reason.
	Refused []Refusal `json:"refused,omitempty"`
	// Unchecked: the objects the dry-run could not judge, with why (a
	// kind the head's own CRD adds, an object this identity may not read).
	Unchecked []Refusal `json:"unchecked,omitempty"`

	pr status.PullRequest
}

// Job is what the live state adds to one FlinkBlueGreenDeployment's plan.
type Job struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Facts, one sentence each: the running colour and the savepoint the
	// new colour would start from, a rollout in flight this change
	// supersedes, a closed rollout window and when it opens, manual
	// promotion, the abort deadline, a removal or rename that stops a job.
	Facts []string `json:"facts,omitempty"`
	// StopsWithoutSavepoint: the head removes or replaces a job that runs
	// and no savepoint would keep its state.
	StopsWithoutSavepoint bool `json:"stopsWithoutSavepoint,omitempty"`
	// Running is the child that runs now (status.activeDeployment), ""
	// when none does or the object is new.
	Running string `json:"running,omitempty"`
	// Action is the plan's (review.Plan.Action).
	Action review.Action `json:"action"`
}

// Refusal is an object the dry-run refused.
type Refusal struct {
	Object string `json:"object"` // Kind namespace/name
	Reason string `json:"reason"` // the API server's message
}

// Plan plans in.Head against the cluster. Nothing is written. A refusal of
// the dry-run is part of the Result, not an error.
func Plan(ctx context.Context, in Input) (*Result, error) {
	head := make([]*unstructured.Unstructured, len(in.Head))
	for i, u := range in.Head {
		head[i] = u.DeepCopy()
	}
	live, err := compare(ctx, in.Applier, in.Reader, head, in.GitRepository, Rules{Confined: in.Confined, Check: in.Check})
	if err != nil {
		return nil, err
	}
	live.Report.Head = headRevision(in.HeadRevision)
	if in.GitRepository != nil {
		live.Report.Path = in.GitRepository.GetPath()
	}
	if in.CheckChild != nil {
		SetChecks(live.Report, ChildChecks(ctx, in.CheckChild, in.Applier, head))
	} else {
		SetChecks(live.Report, nil)
	}
	fbgds, err := headFBGDs(head)
	if err != nil {
		return nil, err
	}
	js, err := jobs(ctx, in, live.Report, fbgds)
	if err != nil {
		return nil, err
	}
	return &Result{Report: live.Report, Jobs: js, Refused: live.Refused, Unchecked: live.Unchecked, pr: in.PullRequest}, nil
}

// headRevision is <ref>@sha1:<hex> as a review.Revision.
func headRevision(rev string) review.Revision {
	ref, sha, err := v1alpha1.ParseRevision(rev)
	if err != nil {
		return review.Revision{Ref: rev}
	}
	return review.Revision{Ref: ref, SHA: sha}
}

// headFBGDs are the FlinkBlueGreenDeployments of head by review ID.
func headFBGDs(head []*unstructured.Unstructured) (map[string]*v1alpha1.FlinkBlueGreenDeployment, error) {
	out := map[string]*v1alpha1.FlinkBlueGreenDeployment{}
	for _, u := range head {
		gvk := u.GroupVersionKind()
		if gvk.Group != v1alpha1.GroupVersion.Group || gvk.Kind != v1alpha1.FlinkBlueGreenDeploymentKind {
			continue
		}
		p := &v1alpha1.FlinkBlueGreenDeployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
			return nil, fmt.Errorf("%s: not a valid FlinkBlueGreenDeployment: %w", idOf(u), err)
		}
		out[idOf(u)] = p
	}
	return out, nil
}

// Outcome is v1alpha1.PlanFailed when the dry-run refused an object, the
// cluster will refuse a job's child or a job would stop without a
// savepoint, else v1alpha1.PlanSucceeded.
func (r *Result) Outcome() string {
	if len(r.Refused) > 0 {
		return v1alpha1.PlanFailed
	}
	if r.Report != nil {
		for _, o := range r.Report.Objects {
			if o.Deployment.WillBeRefused() {
				return v1alpha1.PlanFailed
			}
		}
	}
	for _, j := range r.Jobs {
		if j.StopsWithoutSavepoint {
			return v1alpha1.PlanFailed
		}
	}
	return v1alpha1.PlanSucceeded
}
