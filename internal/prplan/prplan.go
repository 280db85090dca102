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
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
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
}

// Result is a plan.
type Result struct {
	// Report compares the live objects (base) with the head; each
	// FlinkBlueGreenDeployment's Deployment is bluegreen's plan.
	Report *review.Report
	// Jobs: what the live state adds, per FlinkBlueGreenDeployment that
	// the head adds, changes or removes.
	Jobs []Job
	// Refused: the objects the API server refused in the dry-run, with its
	// reason.
	Refused []Refusal
}

// Job is what the live state adds to one FlinkBlueGreenDeployment's plan.
type Job struct {
	Namespace, Name string
	// Facts, one sentence each: the running colour and the savepoint the
	// new colour would start from, a rollout in flight this change
	// supersedes, a closed rollout window and when it opens, manual
	// promotion, the abort deadline, a removal or rename that stops a job.
	Facts []string
	// StopsWithoutSavepoint: the head removes or replaces a job that runs
	// and no savepoint would keep its state.
	StopsWithoutSavepoint bool
}

// Refusal is an object the dry-run refused.
type Refusal struct {
	Object string // Kind namespace/name
	Reason string // the API server's message
}

// ErrNotImplemented is returned until the planner lands.
var ErrNotImplemented = errors.New("prplan: not implemented")

// Plan plans in.Head against the cluster. Nothing is written.
func Plan(ctx context.Context, in Input) (*Result, error) {
	return nil, ErrNotImplemented
}

// Outcome is v1alpha1.PlanFailed when the dry-run refused an object or a
// job would stop without a savepoint, else v1alpha1.PlanSucceeded.
func (r *Result) Outcome() string { return v1alpha1.PlanFailed }

// Summary is one line (at most 140 bytes) for the commit status: what the
// change does to the running jobs, or why it fails.
func (r *Result) Summary() string { return "" }

// Markdown is the report of the plan comment: the marker line first, then
// the live facts and the diff (review.WriteMarkdown).
func (r *Result) Markdown(marker string) string { return marker }

// Text is the report `bg-gitops plan` prints.
func (r *Result) Text() string { return "" }
