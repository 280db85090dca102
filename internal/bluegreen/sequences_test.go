/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// Sequences of events, each named by the fact it pins, replayed on the
// model: each must pass every invariant and end in the stated state.
var sequences = []struct {
	name   string
	mode   string
	manual bool
	trail  []string
	want   v1alpha1.BlueGreenState
	job    v1alpha1.JobState
}{{
	// The abort's status is written first, its suspend of green lost; green
	// then reports STABLE/RUNNING. Deleting blue would leave nothing
	// running: green is suspended again.
	name: "LostAbortWriteNeverDeletesTheRunningJob", mode: v1alpha1.UpgradeModeSavepoint,
	trail: concatSteps(toGreen, "operator acts on the spec of GREEN", "clock past the next deadline",
		"reconcile, crash after the status write", "job becomes ready: GREEN", "reconcile"),
	want: v1alpha1.ActiveBlue, job: v1alpha1.JobFailing,
}, {
	// The savepoint completes and the API server rejects the new colour:
	// a failed rollout, not a retry loop.
	name: "RejectedNewColourFailsTheRollout", mode: v1alpha1.UpgradeModeSavepoint,
	trail: concatSteps(activeBlue, "commit: a spec the cluster rejects", "reconcile", "savepoint completes", "reconcile", "reconcile"),
	want:  v1alpha1.ActiveBlue, job: v1alpha1.JobFailing,
}, {
	name: "RejectedFirstDeploymentFails", mode: v1alpha1.UpgradeModeSavepoint,
	trail: []string{"commit: a spec the cluster rejects", "reconcile", "reconcile"},
	want:  v1alpha1.InitializingBlue, job: v1alpha1.JobFailing,
}, {
	// A denied savepoint request ends the attempt once; the stamped spec
	// must count as handled within the same decision.
	name: "DeniedSavepointIsNotRetriedInALoop", mode: v1alpha1.UpgradeModeSavepoint,
	trail: concatSteps(activeGreen, "commit: new image", "webhook denies savepoints (toggle)", "reconcile", "reconcile"),
	want:  v1alpha1.ActiveGreen, job: v1alpha1.JobFailing,
}, {
	// With the status wiped, a first deployment of blue beside the running
	// green would replace green's state with spec.template's.
	name: "WipedStatusAdoptsTheRunningColour", mode: v1alpha1.UpgradeModeSavepoint,
	trail: concatSteps(activeGreen, "status wiped", "reconcile", "operator acts on the spec of BLUE", "job becomes ready: BLUE", "reconcile"),
	want:  v1alpha1.ActiveGreen, job: v1alpha1.JobRunning,
}, {
	// A suspended job whose status was wiped holds its state in a
	// savepoint; resuming it is in place, not a first deployment that a
	// later change would restart from spec.template.
	name: "WipedStatusAdoptsASuspendedJob", mode: v1alpha1.UpgradeModeSavepoint,
	trail: concatSteps(activeBlue, "commit: suspend", "reconcile", "operator acts on the spec of BLUE", "reconcile",
		"status wiped", "commit: resume", "reconcile", "operator acts on the spec of BLUE", "job becomes ready: BLUE", "reconcile"),
	want: v1alpha1.ActiveBlue, job: v1alpha1.JobRunning,
}, {
	// A retry requested during a first deployment must not restart it
	// after it aborts (the transition would never end).
	name: "RetryDuringATransitionIsAcknowledged", mode: v1alpha1.UpgradeModeStateless,
	trail: []string{"reconcile", "commit: parallelism.default (in place)", "request bggitops.dev/retry-requested-at",
		"clock past the next deadline", "reconcile", "clock past the next deadline", "reconcile"},
	want: v1alpha1.InitializingBlue, job: v1alpha1.JobFailing,
}, {
	// A new colour that keeps crashing and coming back cannot hold the
	// transition open past its deadline.
	name: "FlappingNewColourAbortsAtTheDeadline", mode: v1alpha1.UpgradeModeSavepoint,
	trail: concatSteps(concatSteps(toGreen, "operator acts on the spec of GREEN"), flaps(20)...),
	want:  v1alpha1.ActiveBlue, job: v1alpha1.JobFailing,
}, {
	// A rejected in-place change decided on a wiped status must not take
	// the running job for a first deployment and suspend it.
	name: "RejectionAfterAWipedStatusKeepsTheRunningJob", mode: v1alpha1.UpgradeModeStateless,
	trail: strings.Split("reconcile → status wiped → reconcile → commit: a spec the cluster rejects → commit: suspend → "+
		"operator acts on the spec of BLUE → reconcile → status wiped → reconcile → commit: resume → reconcile → "+
		"commit: new image → reconcile → commit: a spec the cluster rejects → reconcile", " → "),
	want: v1alpha1.ActiveBlue, job: v1alpha1.JobFailing,
}, {
	// The resume's status was written first and its apply lost: the job
	// is resumed again, and reported RECONCILING while it comes back,
	// never SUSPENDED.
	name: "LostResumeWriteIsNotReportedSuspended", mode: v1alpha1.UpgradeModeStateless,
	trail: strings.Split("reconcile → status wiped → commit: suspend → reconcile → status wiped → reconcile → "+
		"commit: resume → reconcile, crash after the status write → reconcile", " → "),
	want: v1alpha1.TransitioningToBlue, job: v1alpha1.JobReconciling,
}, {
	// Manual promotion with a deletion delay: a promotion requested before
	// the delay has passed is carried out when it has (it was
	// acknowledged early and lost).
	name: "PromotionDuringTheDeletionDelayIsCarriedOut", mode: v1alpha1.UpgradeModeSavepoint, manual: true,
	trail: concatSteps(toGreen, "operator acts on the spec of GREEN", "request "+v1alpha1.PromoteRequestedAtAnnotation,
		"job becomes ready: GREEN", "reconcile", "clock past the next deadline", "reconcile"),
	want: v1alpha1.ActiveGreen, job: v1alpha1.JobRunning,
}, {
	// Resuming a suspended job from a chosen savepoint (state running, a
	// new savepointRedeployNonce and initialSavepointPath in one commit)
	// must give the operator the chosen path: it redeploys from it.
	name: "ResumeWithANewRedeployNonceUsesTheChosenPath", mode: v1alpha1.UpgradeModeSavepoint,
	trail: concatSteps(activeGreen, "commit: suspend", "reconcile", "operator acts on the spec of GREEN", "reconcile",
		"commit: resume from another savepoint", "reconcile", "operator acts on the spec of GREEN", "job becomes ready: GREEN", "reconcile"),
	want: v1alpha1.ActiveGreen, job: v1alpha1.JobRunning,
}, {
	// A refused delete at the cut-over (recorded first: green is active)
	// ends the rollout failed: green keeps running, blue is suspended (no
	// two jobs running, no transition held open).
	name: "RefusedDeleteAtTheCutOverSuspendsTheOldColour", mode: v1alpha1.UpgradeModeSavepoint,
	trail: concatSteps(toGreen, "operator acts on the spec of GREEN", "job becomes ready: GREEN", "RBAC forbids deletes (toggle)",
		"reconcile", "clock past the next deadline", "reconcile", "reconcile"),
	want: v1alpha1.ActiveGreen, job: v1alpha1.JobFailing,
}}

func concatSteps(prefix []string, more ...string) []string {
	return append(prefix[:len(prefix):len(prefix)], more...)
}

func flaps(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, "job becomes ready: GREEN", "reconcile", "job crashes: GREEN", "clock +700ms",
			"reconcile", "job restarts from its checkpoint: GREEN")
	}
	return out
}

// TestReplayedSequencesKeepEveryInvariant replays each sequence on the
// model: every invariant holds at every step, and it ends in its state.
func TestReplayedSequencesKeepEveryInvariant(t *testing.T) {
	for _, r := range sequences {
		t.Run(r.name, func(t *testing.T) {
			m := newModel(r.mode, r.manual)
			for i, name := range r.trail {
				ok, err := eventByName(name).do(m)
				if err != nil {
					t.Fatalf("step %d %q: %v\nafter: %s\nstate: %s", i, name, err, strings.Join(r.trail[:i+1], " → "), m.describe())
				}
				_ = ok
			}
			if st := m.P.Status; st.BlueGreenState != r.want || st.JobStatus.State != r.job {
				t.Fatalf("ends in %s, want %s/%s (error %q)", m.describe(), r.want, r.job, st.Error)
			}
		})
	}
}
