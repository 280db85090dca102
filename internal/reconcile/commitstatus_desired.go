/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
)

// syncDesired derives the sync commit status from a GitRepository's status.
func syncDesired(gr *v1alpha1.GitRepository) []status.Desired {
	rev := gr.Status.LastAttemptedRevision
	if rev == "" {
		return nil
	}
	want := func(s status.State, desc string) []status.Desired {
		return []status.Desired{{Revision: rev, Status: status.Entry{
			Context: status.SyncContext(gr.Namespace, gr.Name), State: s, Description: desc}}}
	}
	for _, typ := range []string{v1alpha1.BuildFailedCondition, v1alpha1.ApplyFailedCondition} {
		if c := findCondition(gr.Status.Conditions, typ); c != nil && c.Status == "True" {
			return want(status.StateFailure, c.Message)
		}
	}
	switch {
	case conditionTrue(gr.Status.Conditions, v1alpha1.ReconcilingCondition):
		return want(status.StatePending, "applying to the cluster")
	case gr.Status.LastAppliedRevision == rev:
		n := 0
		if gr.Status.Inventory != nil {
			n = len(gr.Status.Inventory.Entries)
		}
		return want(status.StateSuccess, fmt.Sprintf("applied to the cluster (%d objects)", n))
	}
	return nil
}

// rolloutDesired derives the rollout commit statuses from a
// FlinkBlueGreenDeployment's status: the state of the revision being rolled
// out, and "superseded" for an earlier revision left pending.
func rolloutDesired(p *v1alpha1.FlinkBlueGreenDeployment) []status.Desired {
	st := p.Status
	rev, s, desc := rolloutState(p)
	if rev == "" || s == "" {
		return nil
	}
	ctx := status.RolloutContext(p.Namespace, p.Name)
	out := []status.Desired{{Revision: rev, Status: status.Entry{Context: ctx, State: s, Description: desc}}}
	for _, r := range st.CommitStatuses {
		if r.Context == ctx && r.Revision != rev && r.State == string(status.StatePending) {
			out = append(out, status.Desired{Revision: r.Revision, Status: status.Entry{Context: ctx, State: status.StateFailure,
				Description: "superseded by " + shortRevision(rev) + " before its rollout finished"}})
		}
	}
	return out
}

// rolloutState is the revision the rollout status belongs to, its state
// and a description a reviewer understands.
func rolloutState(p *v1alpha1.FlinkBlueGreenDeployment) (string, status.State, string) {
	st := p.Status
	target := st.TargetRevision
	if target == "" {
		target = p.Annotations[v1alpha1.RevisionAnnotation]
	}
	reconciling := findCondition(st.Conditions, v1alpha1.ReconcilingCondition)
	switch {
	case st.JobStatus.State == v1alpha1.JobFailing:
		return target, status.StateFailure, st.Error
	case st.BlueGreenState.InProgress(), st.BlueGreenState == v1alpha1.InitializingBlue:
		return target, status.StatePending, conditionText(reconciling, "rollout in progress")
	case reconciling != nil && reconciling.Status == "True":
		return target, status.StatePending, reconciling.Message
	case st.JobStatus.State == v1alpha1.JobRunning:
		return st.ActiveRevision, status.StateSuccess, activeText(st)
	case st.JobStatus.State == v1alpha1.JobSuspended:
		return st.ActiveRevision, status.StateSuccess, "job suspended as requested"
	}
	return "", "", ""
}

func activeText(st v1alpha1.FlinkBlueGreenDeploymentStatus) string {
	msg := st.ActiveDeployment + " active"
	if st.Savepoint != nil && st.Savepoint.Path != "" {
		msg += ", restored from savepoint " + st.Savepoint.Path
	}
	return msg
}

func conditionText(c *metav1.Condition, fallback string) string {
	if c == nil || c.Message == "" {
		return fallback
	}
	return c.Message
}

func shortRevision(rev string) string {
	_, sha, err := v1alpha1.ParseRevision(rev)
	if err != nil {
		return rev
	}
	return v1alpha1.ShortSHA(sha)
}
