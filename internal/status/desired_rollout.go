/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// desired_rollout.go: RolloutDesired, the rollout commit statuses a
// FlinkBlueGreenDeployment's status calls for.

package status

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/conditions"
)

// MaxPending bounds the pending statuses of one commit and context: past
// it, only a verdict (success or failure) is posted. A rollout goes
// through at most five phases (docs/spec/v1alpha1/flinkbluegreendeployments.md,
// "Commit statuses"); the rest is
// room for a job that flaps between two of them.
const MaxPending = 7

// RolloutDesired derives the rollout commit statuses of a
// FlinkBlueGreenDeployment from its status:
//
//   - the revision last applied, when Decide refused its spec: failure;
//   - the target revision: pending with the phase of its rollout, or its
//     verdict (success, failure);
//   - the revisions that went live (status.liveRevisions): success;
//   - the revision last applied: while another one rolls out, pending,
//     waiting for it; once nothing is in progress, the verdict ("no
//     change" when the active colour runs its spec);
//   - a revision left pending that never went live: failure, superseded.
//
// A success is final: no later status replaces it, whatever the job does
// after it went live.
func RolloutDesired(p *v1alpha1.FlinkBlueGreenDeployment) []Desired {
	st := p.Status
	ctx := RolloutContext(p.Namespace, p.Name)
	var out []Desired
	want := func(rev string) func(State, string) {
		return func(s State, desc string) {
			if rev == "" || s == "" || final(st.CommitStatuses, ctx, rev) || wanted(out, rev) {
				return
			}
			if s != StateSuccess && slices.Contains(st.LiveRevisions, rev) {
				// Went live: its success is final even once its record
				// left status.commitStatuses (the newest maxRecords).
				return
			}
			out = append(out, Desired{Revision: rev, Status: Entry{Context: ctx, State: s, Description: desc}})
		}
	}
	latest, target := p.Annotations[v1alpha1.RevisionAnnotation], st.TargetRevision
	if target == "" {
		target = latest
	}
	if c := conditions.Get(st.Conditions, v1alpha1.StalledCondition); c != nil && c.Status == "True" && c.Reason == "InvalidSpec" {
		want(latest)(StateFailure, c.Message)
	}
	phase, inProgress := rolloutPhase(p)
	if inProgress {
		want(target)(StatePending, phase)
	} else {
		want(target)(rolloutVerdict(p, target))
	}
	for i := len(st.LiveRevisions) - 1; i >= 0; i-- {
		want(st.LiveRevisions[i])(StateSuccess, liveText(st, i))
	}
	if latest != target {
		want(latest)(latestStatus(p, inProgress, target, final(st.CommitStatuses, ctx, target)))
	}
	for _, r := range st.CommitStatuses {
		if r.Context == ctx && r.State == string(StatePending) {
			want(r.Revision)(StateFailure, "superseded by "+shortRevision(target)+" before it went live")
		}
	}
	return withinBound(out, st.CommitStatuses)
}

// latestStatus is the status of the revision last applied when it is not
// the target: it waits while the target rolls out; after, it shares the
// target's verdict ("no change" when the active colour runs its spec), or
// after a failed target says so (with the error itself when the target
// went live: what failed since is not that rollout).
func latestStatus(p *v1alpha1.FlinkBlueGreenDeployment, inProgress bool, target string, targetLive bool) (State, string) {
	if inProgress {
		return StatePending, "waiting for the rollout of " + shortRevision(target) + " to finish"
	}
	verdict, desc := rolloutVerdict(p, p.Annotations[v1alpha1.RevisionAnnotation])
	if verdict == StateFailure && !targetLive {
		desc = "not rolled out: the rollout of its spec failed at " + shortRevision(target)
	}
	return verdict, desc
}

// liveText describes status.liveRevisions[i]: the active revision, or one
// replaced since (posted only when the forge missed its success).
func liveText(st v1alpha1.FlinkBlueGreenDeploymentStatus, i int) string {
	if i == len(st.LiveRevisions)-1 && st.LiveRevisions[i] == st.ActiveRevision {
		return activeText(st)
	}
	if i == len(st.LiveRevisions)-1 {
		return "went live"
	}
	return "went live; replaced since by " + shortRevision(st.LiveRevisions[i+1])
}

// rolloutPhase is the pending status of a rollout under way: its
// description names the phase and nothing that changes within it
// (deadlines, restarts), so a job that restarts while it starts posts
// nothing new. The details are in the Reconciling condition and events.
func rolloutPhase(p *v1alpha1.FlinkBlueGreenDeployment) (string, bool) {
	st := p.Status
	reconciling := conditions.Get(st.Conditions, v1alpha1.ReconcilingCondition)
	switch {
	case st.BlueGreenState.Savepointing():
		return "taking a savepoint of " + st.ActiveDeployment, true
	case st.BlueGreenState.Transitioning():
		return transitionPhase(p, reconciling), true
	case reconciling == nil || reconciling.Status != "True", st.JobStatus.State == v1alpha1.JobFailing:
		// A transition that cannot start (the active job is not ready) is
		// a failure until it starts: the verdict says why.
		return "", false
	}
	switch reconciling.Reason {
	case "WaitingForRolloutWindow":
		return reconciling.Message, true
	case "WaitingForDeletion":
		return "waiting for a FlinkDeployment of an earlier rollout to be deleted", true
	}
	return "rollout in progress", true
}

func transitionPhase(p *v1alpha1.FlinkBlueGreenDeployment, reconciling *metav1.Condition) string {
	st := p.Status
	color := bluegreen.Blue
	if st.BlueGreenState == v1alpha1.TransitioningToGreen {
		color = bluegreen.Green
	}
	t := bluegreen.ChildName(p.Name, color)
	switch {
	case st.ActiveDeployment == "":
		return "deploying " + t
	case st.ActiveDeployment == t:
		return "changing " + t + " in place"
	case reconciling != nil && reconciling.Reason == "WaitingForPromotion":
		return reconciling.Message
	}
	from := "spec.template"
	if st.Savepoint != nil && st.Savepoint.Path != "" {
		from = "savepoint " + st.Savepoint.Path
	}
	return fmt.Sprintf("starting %s from %s; %s keeps running", t, from, st.ActiveDeployment)
}

// rolloutVerdict is the outcome for rev once nothing is in progress:
// failure with the error, success while the active colour runs (or is
// suspended as asked) — "no change" for a revision it was not deployed
// from — and nothing while it is not known.
func rolloutVerdict(p *v1alpha1.FlinkBlueGreenDeployment, rev string) (State, string) {
	st := p.Status
	switch st.JobStatus.State {
	case v1alpha1.JobFailing:
		if c := conditions.Get(st.Conditions, v1alpha1.ReconcilingCondition); c != nil && c.Status == "True" && c.Reason == "WaitingForActiveJob" {
			// The error names the job's state of the moment: the status
			// would change with each restart of a crash-looping job.
			return StateFailure, "transition not started: " + st.ActiveDeployment + " is not ready; it starts when it is"
		}
		return StateFailure, st.Error
	case v1alpha1.JobSuspended:
		if st.ActiveDeployment == "" {
			return StateSuccess, "suspended as requested: no FlinkDeployment is started"
		}
	case v1alpha1.JobRunning:
	default:
		return "", ""
	}
	if rev != st.ActiveRevision {
		return StateSuccess, "no change: " + st.ActiveDeployment + " already runs this spec"
	}
	return StateSuccess, activeText(st)
}

func activeText(st v1alpha1.FlinkBlueGreenDeploymentStatus) string {
	if st.JobStatus.State == v1alpha1.JobSuspended {
		return st.ActiveDeployment + " suspended as requested"
	}
	msg := st.ActiveDeployment + " active"
	if st.Savepoint != nil && st.Savepoint.Path != "" {
		msg += ", restored from savepoint " + st.Savepoint.Path
	}
	return msg
}

// final reports a success recorded for rev: the revision went live. An
// unconfirmed one counts (unconfirmedVerdicts posts it again until the
// forge confirms it): nothing else is wanted for that revision.
func final(records []v1alpha1.CommitStatusRecord, ctx, rev string) bool {
	for _, r := range records {
		if r.Context == ctx && r.Revision == rev && r.State == string(StateSuccess) {
			return true
		}
	}
	return false
}

func wanted(out []Desired, rev string) bool {
	for _, d := range out {
		if d.Revision == rev {
			return true
		}
	}
	return false
}

// withinBound drops the pending statuses of a commit and context that has
// had MaxPending statuses posted.
func withinBound(desired []Desired, records []v1alpha1.CommitStatusRecord) []Desired {
	out := desired[:0]
	for _, d := range desired {
		if d.Status.State == StatePending && posted(records, d.Status.Context, d.Revision) >= MaxPending {
			continue
		}
		out = append(out, d)
	}
	return out
}

func posted(records []v1alpha1.CommitStatusRecord, ctx, rev string) int32 {
	for _, r := range records {
		if r.Context == ctx && r.Revision == rev {
			return r.Pending
		}
	}
	return 0
}
