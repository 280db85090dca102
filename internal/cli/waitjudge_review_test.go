/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// handledSpec records p's spec as the one the controller last acted on,
// as bluegreen's stamp does.
func handledSpec(t *testing.T, p *v1alpha1.FlinkBlueGreenDeployment) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p.Spec.Template.Spec.Image = "flink:1.20.0"
	p.Spec.Template.Spec.Job = &v1alpha1.JobSpec{JarURI: "local:///job.jar", UpgradeMode: "savepoint"}
	b, err := json.Marshal(map[string]any{"spec": p.Spec})
	require.NoError(t, err)
	p.Status.LastReconciledSpec = string(b)
	return p
}

func reconciling(reason, msg string) []metav1.Condition {
	return []metav1.Condition{{Type: v1alpha1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: 2}}
}

// A commit that does not change this FlinkBlueGreenDeployment's spec (it
// changes another one of the GitRepository, or a file outside it) only
// re-stamps the revision annotation: metadata.generation stays, Decide
// sees no pending spec and does not touch targetRevision. The commit
// status says "no change"; the wait must too, instead of running into
// its timeout (exit 4) — docs/cli.md's `wait gitrepository --rollouts`
// promises exit 0 "or nothing to roll out for it".
func TestReviewWaitACommitThatLeavesTheSpecAloneChangesNothing(t *testing.T) {
	p := handledSpec(t, stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}, ActiveDeployment: "job-blue",
		ActiveRevision: rev(shaA), TargetRevision: rev(shaA), LiveRevisions: []string{rev(shaA)}}))
	v := (&fbgdRevision{want: commitRef(shaB)}).judge(p)
	require.NoError(t, v.err)
	assert.True(t, v.done, "a wait for a commit that changes nothing here never ends: %s", v.line)
	assert.Contains(t, v.line, "changes nothing")

	// The same object before the controller handled a spec change: the
	// spec differs from the one handled, so it is not "no change".
	p.Spec.Template.Spec.Image = "flink:1.20.1"
	v = (&fbgdRevision{want: commitRef(shaB)}).judge(p)
	assert.False(t, v.done, v.line)
	assert.NoError(t, v.err)
}

// A transition held back by a closed rollout window: waitForWindow sets
// targetRevision to the commit and reports the running old job RUNNING
// in ACTIVE_BLUE, with Reconciling True (WaitingForRolloutWindow). The
// rollout has not happened: exit 0 "changes nothing" is a false green for
// a CI gate. docs/cli.md: a closed window has no bound; the wait goes on.
func TestReviewWaitAClosedRolloutWindowIsNotNoChange(t *testing.T) {
	p := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}, ActiveDeployment: "job-blue",
		ActiveRevision: rev(shaA), TargetRevision: rev(shaB),
		Conditions: reconciling("WaitingForRolloutWindow", "rollout window opens at 02:00 to roll out main@sha1:bbbb")})
	v := (&fbgdRevision{want: commitRef(shaB)}).judge(p)
	require.NoError(t, v.err)
	assert.False(t, v.done, "a rollout waiting for its window is reported done: %s", v.line)

	// Likewise while a leftover of an aborted transition is deleted first.
	p.Status.Conditions = reconciling("WaitingForDeletion", "deleting FlinkDeployment job-green left by an earlier transition")
	p.Status.JobStatus.State = v1alpha1.JobRunning
	v = (&fbgdRevision{want: commitRef(shaB)}).judge(p)
	assert.False(t, v.done, v.line)
}

// A rollout of B is under way when commit C lands that leaves this
// object's spec alone (or whose change waits for B's rollout): the
// controller goes on with B, which goes live. The wait for B must not
// exit 3 "superseded" as soon as the annotation says C (the commit status
// of B becomes success).
func TestReviewWaitARolloutStillUnderWayIsNotSuperseded(t *testing.T) {
	j := &fbgdRevision{want: commitRef(shaB)}
	under := v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToGreen,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobReconciling}, ActiveDeployment: "job-blue",
		ActiveRevision: rev(shaA), TargetRevision: rev(shaB)}
	v := j.judge(stampedFBGD(rev(shaB), under))
	require.NoError(t, v.err)
	require.False(t, v.done)

	v = j.judge(stampedFBGD(rev(shaC), under))
	require.NoError(t, v.err, "B is still being rolled out: %s", v.line)
	assert.False(t, v.done)

	// B goes live: done, whatever the annotation says now.
	live := v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveGreen,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}, ActiveDeployment: "job-green",
		ActiveRevision: rev(shaB), TargetRevision: rev(shaB), LiveRevisions: []string{rev(shaA), rev(shaB)}}
	v = j.judge(stampedFBGD(rev(shaC), live))
	require.NoError(t, v.err)
	assert.True(t, v.done, v.line)

	// Or it aborts: exit 3 with the reason, not "superseded".
	j = &fbgdRevision{want: commitRef(shaB), seen: true}
	aborted := v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, ActiveDeployment: "job-blue",
		ActiveRevision: rev(shaA), TargetRevision: rev(shaB), Error: "transition to job-green aborted: not ready"}
	v = j.judge(stampedFBGD(rev(shaC), aborted))
	require.Error(t, v.err)
	assert.Contains(t, v.err.Error(), "the rollout of bbbbbbbbbbbb failed: transition to job-green aborted")

	// Once the controller moved on to C, B is superseded.
	moved := under
	moved.TargetRevision = rev(shaC)
	v = j.judge(stampedFBGD(rev(shaC), moved))
	require.Error(t, v.err)
	assert.Contains(t, v.err.Error(), "superseded by cccccccccccc")
}

// The GitRepository shows the revision it starts to apply
// (startRevision: lastAttemptedRevision, Reconciling True) before the
// apply, and leaves Ready as the previous reconcile set it. After a
// broken commit, Ready is False (BuildFailed of that commit) while the
// fix is being applied: the wait for the fix must not exit 3 with the
// broken commit's error.
func TestReviewWaitAFixIsNotBlamedForTheBrokenCommitBeforeIt(t *testing.T) {
	g := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Generation: 1}}
	g.Status.Artifact = &v1alpha1.Artifact{Revision: rev(shaB)}
	g.Status.LastAttemptedRevision, g.Status.LastAppliedRevision = rev(shaB), rev(shaA)
	g.Status.Conditions = []metav1.Condition{
		{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "BuildFailed",
			Message: "kustomize build failed: missing.yaml (revision cccc)", ObservedGeneration: 1},
		{Type: v1alpha1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: "Progressing",
			Message: "applying revision " + rev(shaB), ObservedGeneration: 1},
	}
	v := (&gitRepositoryRevision{want: commitRef(shaB)}).judge(g)
	assert.NoError(t, v.err, "B is being applied; the failure is the previous commit's")
	assert.False(t, v.done)
}

// A GitRepository suspended after it applied the commit: the commit is
// applied (lastAppliedRevision), so the wait is done (and a wait for
// --rollouts goes on with the rollouts), not exit 2 "is not applied until
// resume".
func TestReviewWaitAnAppliedCommitOfASuspendedGitRepository(t *testing.T) {
	g := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Generation: 1,
		Annotations: map[string]string{v1alpha1.SuspendAnnotation: "true"}}}
	g.Status.Artifact = &v1alpha1.Artifact{Revision: rev(shaB)}
	g.Status.LastAttemptedRevision, g.Status.LastAppliedRevision = rev(shaB), rev(shaB)
	g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "Suspended",
		Message: "suspended", ObservedGeneration: 1}}
	v := (&gitRepositoryRevision{want: commitRef(shaB)}).judge(g)
	require.NoError(t, v.err, v.line)
	assert.True(t, v.done)
}

// A first commit whose template is suspended: FLIP-503 starts no
// FlinkDeployment; the state stays INITIALIZING_BLUE with job SUSPENDED
// and the commit as target. "suspended as asked" is exit 0 (help text,
// commit status), not a wait into the timeout.
func TestReviewWaitASuspendedFirstCommitIsDone(t *testing.T) {
	p := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.InitializingBlue,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobSuspended}, TargetRevision: rev(shaB)})
	v := (&fbgdRevision{want: commitRef(shaB)}).judge(p)
	require.NoError(t, v.err)
	assert.True(t, v.done, v.line)
}

// Timers long enough to mean "never" (an abort grace period of 100000
// days for a job promoted by hand) each parse, but their sum overflows
// time.Duration: --timeout auto became negative, and the wait "timed out"
// at once (exit 4) instead of waiting as long as the timers allow.
func TestReviewTimeoutAutoDoesNotOverflow(t *testing.T) {
	p := stampedFBGD(rev(shaA), v1alpha1.FlinkBlueGreenDeploymentStatus{})
	p.Spec.Configuration = map[string]string{
		v1alpha1.AbortGracePeriodKey: "100000 d", v1alpha1.SavepointTimeoutKey: "100000 d"}
	d, err := autoTimeout(p)
	require.NoError(t, err)
	assert.Positive(t, d, "--timeout auto overflowed")
	b, err := (&timeoutFlag{auto: true}).budgetFor(t0, p)
	require.NoError(t, err)
	assert.True(t, b.deadline.After(t0.Add(24*time.Hour)), "deadline %s", b.deadline)
}

// `bg-gitops retry fbgd job` (no --wait), then the CI gate `wait fbgd job
// --for-revision B`: until the controller reads the retry, the status
// still says how the last attempt ended (FAILING, Stalled). The wait must
// follow the retried rollout, not exit 3 on the failure it replaces.
func TestReviewWaitAfterARetryRequestFollowsTheRetry(t *testing.T) {
	p := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, ActiveDeployment: "job-blue",
		ActiveRevision: rev(shaA), TargetRevision: rev(shaB), Error: "transition to job-green aborted",
		LastHandledRetryAt: "2026-12-01T00:00:00Z",
		Conditions: []metav1.Condition{{Type: v1alpha1.StalledCondition, Status: metav1.ConditionTrue, Reason: "RolloutFailed",
			Message: "transition to job-green aborted", ObservedGeneration: 2}}})
	p.Annotations[v1alpha1.RetryRequestedAtAnnotation] = "2026-12-01T01:00:00Z"
	v := (&fbgdRevision{want: commitRef(shaB)}).judge(p)
	assert.NoError(t, v.err, "the failure a pending retry replaces: %s", v.line)
	assert.False(t, v.done)

	// Once handled (and failed again), the failure is the outcome.
	p.Status.LastHandledRetryAt = "2026-12-01T01:00:00Z"
	v = (&fbgdRevision{want: commitRef(shaB)}).judge(p)
	assert.Equal(t, exitFailed, exitCode(v.err))
}

// The commit is applied (lastAppliedRevision), but Ready is False for a
// reason that came after: a later broken commit (BuildFailed), or a fetch
// that fails on a later poll (the Git server is down). The wait waited
// for Ready True into its timeout (exit 4), though the commit is on the
// cluster and its rollouts can be followed.
func TestReviewWaitAnAppliedCommitIsAppliedWhateverCameAfter(t *testing.T) {
	gr := func(attempted, reason string) *v1alpha1.GitRepository {
		g := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Generation: 1}}
		g.Status.Artifact = &v1alpha1.Artifact{Revision: attempted}
		g.Status.LastAttemptedRevision, g.Status.LastAppliedRevision = attempted, rev(shaB)
		g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: reason,
			Message: "later trouble", ObservedGeneration: 1}}
		return g
	}
	for _, g := range []*v1alpha1.GitRepository{gr(rev(shaC), "BuildFailed"), gr(rev(shaB), "FetchFailed")} {
		v := (&gitRepositoryRevision{want: commitRef(shaB)}).judge(g)
		require.NoError(t, v.err, v.line)
		assert.True(t, v.done, "%s: %s", g.Status.Conditions[0].Reason, v.line)
	}
}
