/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// settle.go: settle, which waits until the system is at rest, and
// allRunning.

package chaos

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// allRunning reports whether every job runs: ACTIVE and RUNNING.
func (e *env) allRunning(ctx context.Context) (bool, string) {
	for _, j := range jobs {
		p := &v1alpha1.FlinkBlueGreenDeployment{}
		key := client.ObjectKey{Namespace: repoOf(j.Repo).Namespace, Name: j.Name}
		if err := e.c.Get(ctx, key, p); err != nil {
			return false, fmt.Sprintf("%s: %v", key, err)
		}
		if !p.Status.BlueGreenState.Active() || p.Status.JobStatus.State != v1alpha1.JobRunning {
			return false, fmt.Sprintf("%s is %s/%s", key, p.Status.BlueGreenState, p.Status.JobStatus.State)
		}
	}
	return true, ""
}

// settle waits until the system is at rest for three polls in a row: each
// GitRepository applied its last commit, each job carries it and has no
// rollout in progress, and no commit status waits to be posted. It
// returns "" then, else what was still moving when timeout passed.
func (e *env) settle(ctx context.Context, tl *timeline, timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	calm, why := 0, ""
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if why = e.unrest(ctx); why == "" {
			calm++
		} else {
			calm = 0
		}
		if calm == 3 {
			tl.logf(global, "the system is at rest")
			return ""
		}
		sleep(ctx, 2*time.Second)
	}
	if why == "" {
		why = "interrupted"
	}
	tl.logf(global, "the system did not come to rest within %s: %s", timeout, why)
	return why
}

// unrest says what is still moving, "" when nothing.
func (e *env) unrest(ctx context.Context) string {
	for _, r := range repos {
		head := e.git.head(r.Name)
		gr := &v1alpha1.GitRepository{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, gr); err != nil {
			return err.Error()
		}
		if gr.Status.LastAppliedRevision != head.Revision {
			return fmt.Sprintf("%s applied %s, not %s", r.Name, short(gr.Status.LastAppliedRevision), short(head.Revision))
		}
		if apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.CommitStatusFailedCondition) {
			return r.Name + ": a commit status is not posted yet: " + conditionMessage(gr.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
		}
		for _, j := range jobsOf(r.Name) {
			if why := e.jobUnrest(ctx, client.ObjectKey{Namespace: r.Namespace, Name: j.Name}, head); why != "" {
				return why
			}
		}
	}
	return ""
}

func (e *env) jobUnrest(ctx context.Context, key client.ObjectKey, head *Commit) string {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := e.c.Get(ctx, key, p); err != nil {
		return err.Error()
	}
	switch {
	case p.Annotations[v1alpha1.RevisionAnnotation] != head.Revision:
		return fmt.Sprintf("%s carries %s", key, short(p.Annotations[v1alpha1.RevisionAnnotation]))
	case p.Status.BlueGreenState.InProgress() || !p.Status.BlueGreenState.Active():
		return fmt.Sprintf("%s is %s", key, p.Status.BlueGreenState)
	case apimeta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ReconcilingCondition):
		return fmt.Sprintf("%s is reconciling: %s", key, conditionMessage(p.Status.Conditions, v1alpha1.ReconcilingCondition))
	case apimeta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.CommitStatusFailedCondition):
		return fmt.Sprintf("%s: a commit status is not posted yet: %s", key, conditionMessage(p.Status.Conditions, v1alpha1.CommitStatusFailedCondition))
	}
	return ""
}

// conditionMessage is the reason and message of condition t.
func conditionMessage(conds []metav1.Condition, t string) string {
	c := apimeta.FindStatusCondition(conds, t)
	if c == nil {
		return ""
	}
	return c.Reason + ": " + c.Message
}
