/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The words every view uses for a FlinkBlueGreenDeployment's job: the JOB
// column of `get`, the tree's Job: line, the lines of `get --watch` without
// a terminal and the progress lines of `wait` say the same thing.

package cli

import (
	"strings"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// fbgdJobSummary is where the job stands, read from the status alone:
// "job RUNNING on orders-blue (main@1a2b3c4), rolling out main@9f8e7d6 to
// orders-green", or "rollout FAILED, job RUNNING on orders-blue (...)"
// after a rollout failed while the old colour runs on. The job's word is
// always the JOB column's: status.jobStatus.state says RECONCILING for the
// whole of a rollout while the job that runs is RUNNING. short abbreviates
// a revision.
func fbgdJobSummary(p *v1alpha1.FlinkBlueGreenDeployment, short func(string) string) string {
	st := p.Status
	var parts []string
	if st.RolloutFailedJobRunning() {
		parts = append(parts, "rollout FAILED")
	}
	running := "job " + orNone(treeClean(st.RunningJobState()))
	switch {
	case st.ActiveDeployment != "":
		running += " on " + st.ActiveDeployment + " (" + short(st.ActiveRevision) + ")"
	case st.ActiveRevision != "":
		running += " (" + short(st.ActiveRevision) + ")"
	}
	parts = append(parts, running)
	// treeTargetChild names a colour only while a rollout (or the first
	// deployment) is under way.
	if target := treeTargetChild(p); target != "" && st.TargetRevision != "" {
		parts = append(parts, "rolling out "+short(st.TargetRevision)+" to "+target)
	}
	return strings.Join(parts, ", ")
}
