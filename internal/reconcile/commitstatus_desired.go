/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"fmt"

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

func shortRevision(rev string) string {
	_, sha, err := v1alpha1.ParseRevision(rev)
	if err != nil {
		return rev
	}
	return v1alpha1.ShortSHA(sha)
}
