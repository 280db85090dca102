/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// world.go: World, what the cluster and the forge show at one moment, read by
// Env.Observe.

package devenv

import (
	"context"
	"fmt"
	"sort"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// World is what the cluster and the forge show at one moment.
type World struct {
	At  time.Time
	Git *v1alpha1.GitRepository
	// FBGD is nil until the first apply created it.
	FBGD *v1alpha1.FlinkBlueGreenDeployment
	// Children are the FlinkDeployments in JobNamespace, by name.
	Children map[string]Child
	// Statuses are the commit statuses of the watched commit, oldest
	// first, duplicates included.
	Statuses []gitea.Status
	// ForgeErr is set when Gitea could not be asked (an outage).
	ForgeErr error
	// Ingress is the Service the job's Ingress sends traffic to, "" when
	// there is no Ingress.
	Ingress string
}

// Child is a FlinkDeployment as the simulated Flink operator reports it.
type Child struct {
	Object *unstructured.Unstructured
	Name   string
	// Colour is the flink/blue-green-deployment-type label (BLUE|GREEN).
	Colour           string
	Image            string
	InitialSavepoint string
	// Suspended: spec.job.state is suspended.
	Suspended bool
	Deleting  bool
	Lifecycle string
	JobState  string
	JobID     string
}

// Running is the operator's readiness: STABLE and RUNNING.
func (c Child) Running() bool { return c.Lifecycle == "STABLE" && c.JobState == "RUNNING" }

// SyncContext and RolloutContext are the demo's commit-status contexts.
var (
	SyncContext    = status.SyncContext(SourceNamespace, GitRepositoryName)
	RolloutContext = status.RolloutContext(JobNamespace, JobName)
)

// Observe reads the GitRepository, the FlinkBlueGreenDeployment, its
// children and the commit statuses of sha (none when sha is empty).
func (e *Env) Observe(ctx context.Context, sha string) (*World, error) {
	w := &World{At: time.Now(), Children: map[string]Child{}}
	var err error
	if w.Git, err = e.GitRepository(ctx); err != nil {
		return nil, fmt.Errorf("read GitRepository: %w", err)
	}
	if w.FBGD, err = e.FBGD(ctx); err != nil {
		return nil, fmt.Errorf("read FlinkBlueGreenDeployment: %w", err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	if err := e.Client.List(ctx, list, client.InNamespace(JobNamespace)); err != nil {
		return nil, fmt.Errorf("list FlinkDeployments: %w", err)
	}
	for i := range list.Items {
		c := childOf(&list.Items[i])
		w.Children[c.Name] = c
	}
	if w.Ingress, err = e.ingressBackend(ctx); err != nil {
		return nil, fmt.Errorf("read Ingress: %w", err)
	}
	if sha != "" {
		st, err := e.Gitea.CommitStatuses(ctx, RepoName, sha)
		if err != nil {
			w.ForgeErr = err
		}
		sort.Slice(st, func(a, b int) bool { return st[a].ID < st[b].ID })
		w.Statuses = st
	}
	return w, nil
}

func childOf(u *unstructured.Unstructured) Child {
	str := func(path ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, path...)
		return v
	}
	return Child{
		Object: u, Name: u.GetName(),
		Colour:           u.GetLabels()["flink/blue-green-deployment-type"],
		Image:            str("spec", "image"),
		InitialSavepoint: str("spec", "job", "initialSavepointPath"),
		Suspended:        str("spec", "job", "state") == "suspended",
		Deleting:         u.GetDeletionTimestamp() != nil,
		Lifecycle:        str("status", "lifecycleState"),
		JobState:         str("status", "jobStatus", "state"),
		JobID:            str("status", "jobStatus", "jobId"),
	}
}

// Status returns the newest commit status of context in the given state.
func (w *World) Status(context, state string) (gitea.Status, bool) {
	for i := len(w.Statuses) - 1; i >= 0; i-- {
		if s := w.Statuses[i]; s.Context == context && s.State == state {
			return s, true
		}
	}
	return gitea.Status{}, false
}

// Latest returns the newest commit status of context.
func (w *World) Latest(context string) (gitea.Status, bool) {
	for i := len(w.Statuses) - 1; i >= 0; i-- {
		if w.Statuses[i].Context == context {
			return w.Statuses[i], true
		}
	}
	return gitea.Status{}, false
}

// State is the FlinkBlueGreenDeployment's blue/green and job state.
func (w *World) State() (v1alpha1.BlueGreenState, v1alpha1.JobState) {
	if w.FBGD == nil {
		return "", ""
	}
	return w.FBGD.Status.BlueGreenState, w.FBGD.Status.JobStatus.State
}

// Active is the active child, if any.
func (w *World) Active() (Child, bool) {
	if w.FBGD == nil || w.FBGD.Status.ActiveDeployment == "" {
		return Child{}, false
	}
	c, ok := w.Children[w.FBGD.Status.ActiveDeployment]
	return c, ok
}

// Settled reports an ACTIVE_* state.
func Settled(s v1alpha1.BlueGreenState) bool {
	return s.Active()
}

// ingressBackend is the Service the job's Ingress points at.
func (e *Env) ingressBackend(ctx context.Context) (string, error) {
	ing := &networkingv1.Ingress{}
	err := e.Client.Get(ctx, client.ObjectKey{Namespace: JobNamespace, Name: JobName}, ing)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	}
	for _, r := range ing.Spec.Rules {
		if r.HTTP != nil && len(r.HTTP.Paths) > 0 && r.HTTP.Paths[0].Backend.Service != nil {
			return r.HTTP.Paths[0].Backend.Service.Name, nil
		}
	}
	return "", nil
}
