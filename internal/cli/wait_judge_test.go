/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of how `bg-gitops wait` judges a FlinkBlueGreenDeployment and a
// GitRepository on the commit it waits for; the commits and stamped objects the
// wait tests share.

package cli

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func rev(sha string) string { return "main@sha1:" + sha }

// stampedFBGD is a FlinkBlueGreenDeployment stamped with stamped, whose status
// the test fills in.
func stampedFBGD(stamped string, st v1alpha1.FlinkBlueGreenDeploymentStatus) *v1alpha1.FlinkBlueGreenDeployment {
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", Generation: 2,
		Annotations: map[string]string{v1alpha1.RevisionAnnotation: stamped}}}
	st.ObservedGeneration = 2
	p.Status = st
	return p
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return -1
}

func TestFBGDRevisionJudge(t *testing.T) {
	running := v1alpha1.JobStatus{State: v1alpha1.JobRunning}
	cases := []struct {
		name     string
		obj      *v1alpha1.FlinkBlueGreenDeployment
		seen     bool
		done     bool
		code     int
		contains string
	}{
		{name: "not yet applied", obj: stampedFBGD(rev(shaA), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			JobStatus: running, ActiveRevision: rev(shaA)}), contains: "waiting for bbbbbbbbbbbb to be applied"},
		{name: "transitioning", obj: stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToGreen,
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobReconciling}, ActiveDeployment: "job-blue", ActiveJobState: "RUNNING",
			ActiveRevision: rev(shaA), TargetRevision: rev(shaB)}),
			contains: "TRANSITIONING_TO_GREEN, job RUNNING on job-blue (aaaaaaaaaaaa), rolling out bbbbbbbbbbbb to job-green"},
		{name: "live", obj: stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveGreen,
			JobStatus: running, ActiveDeployment: "job-green", ActiveRevision: rev(shaB), TargetRevision: rev(shaB)}),
			done: true, contains: "bbbbbbbbbbbb is live on job-green, job RUNNING"},
		{name: "live but the job restarts", obj: stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveGreen,
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobReconciling}, ActiveRevision: rev(shaB)})},
		{name: "no change", obj: stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			JobStatus: running, ActiveDeployment: "job-blue", ActiveRevision: rev(shaA), TargetRevision: rev(shaB)}),
			done: true, contains: "changes nothing job runs"},
		{name: "failed", obj: stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, ActiveRevision: rev(shaA), TargetRevision: rev(shaB),
			Error: "aborted: job-green was not ready"}), code: exitFailed, contains: "the rollout of bbbbbbbbbbbb failed: aborted: job-green was not ready"},
		{name: "went live, then replaced", obj: stampedFBGD(rev(shaA), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.SavepointingGreen,
			LiveRevisions: []string{rev(shaB)}, ActiveRevision: rev(shaB), TargetRevision: rev(shaA)}), done: true, contains: "went live"},
		{name: "superseded", seen: true, obj: stampedFBGD(rev(shaA), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			JobStatus: running, ActiveRevision: rev(shaA)}), code: exitFailed, contains: "superseded by aaaaaaaaaaaa before it went live"},
		{name: "status not yet for this generation", obj: func() *v1alpha1.FlinkBlueGreenDeployment {
			p := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, JobStatus: running,
				ActiveRevision: rev(shaA), TargetRevision: rev(shaB)})
			p.Generation = 3
			return p
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &fbgdRevision{want: commitRef(shaB), seen: tc.seen}
			v := j.judge(tc.obj)
			assert.Equal(t, tc.done, v.done, v.line)
			if tc.code != 0 {
				require.Error(t, v.err)
				assert.Equal(t, tc.code, exitCode(v.err))
				assert.Contains(t, v.err.Error(), tc.contains)
				return
			}
			require.NoError(t, v.err)
			assert.Contains(t, v.line, tc.contains)
		})
	}
}

// TestWaitLinesSayTheJobInTheWordsOfTheJobColumn: the progress lines of
// a wait name the job that runs with the state the JOB column of `get`
// shows (status.activeJobState) and on which colour at which revision,
// not the status's RECONCILING summary of the rollout; an aborted rollout
// whose old colour runs on reads "rollout FAILED, job RUNNING", as the
// tree's Job: line does, not "job FAILING".
func TestWaitLinesSayTheJobInTheWordsOfTheJobColumn(t *testing.T) {
	under := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.SavepointingBlue,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobReconciling}, ActiveDeployment: "job-blue", ActiveJobState: "RUNNING",
		ActiveRevision: rev(shaA), TargetRevision: rev(shaB)})
	v := (&fbgdRevision{want: commitRef(shaB)}).judge(under)
	require.NoError(t, v.err)
	assert.Equal(t, "fbgd ns/job: SAVEPOINTING_BLUE, job RUNNING on job-blue (aaaaaaaaaaaa), rolling out bbbbbbbbbbbb to job-green", v.line)
	assert.Equal(t, v.line, "fbgd ns/job: SAVEPOINTING_BLUE, "+fbgdJobSummary(under, shortRevision), "the tree's Job: line, in full revisions")

	aborted := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, ActiveDeployment: "job-blue", ActiveJobState: "RUNNING",
		ActiveRevision: rev(shaA), TargetRevision: rev(shaB), Error: "transition to job-green aborted: not ready"})
	v = (&fbgdRevision{want: commitRef(shaB)}).judge(aborted)
	require.Equal(t, exitFailed, exitCode(v.err))
	assert.Equal(t, "fbgd ns/job: ACTIVE_BLUE, rollout FAILED, job RUNNING on job-blue (aaaaaaaaaaaa)", v.line)
	assert.NotContains(t, v.line, "FAILING")
}

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

// TestWaitACommitThatLeavesTheSpecAloneChangesNothing: a commit that does
// not change this FlinkBlueGreenDeployment's spec (it changes another one
// of the GitRepository, or a file outside it) only re-stamps the revision
// annotation: metadata.generation stays, Decide sees no pending spec and
// does not touch targetRevision. The commit status says "no change"; the
// wait says so too and is done, instead of running into its timeout (exit
// 4): docs/cli.md's `wait gitrepository --rollouts` promises exit 0 "or
// nothing to roll out for it".
func TestWaitACommitThatLeavesTheSpecAloneChangesNothing(t *testing.T) {
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

// TestWaitAClosedRolloutWindowIsNotNoChange: a transition held back by a
// closed rollout window has targetRevision set to the commit and reports
// the running old job RUNNING in ACTIVE_BLUE, with Reconciling True
// (WaitingForRolloutWindow). The rollout has not happened, so the wait is
// not done (exit 0 "changes nothing" would be a false green for a CI
// gate); docs/cli.md: a closed window has no bound, the wait goes on. The
// same holds while a leftover of an aborted transition is deleted first.
func TestWaitAClosedRolloutWindowIsNotNoChange(t *testing.T) {
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

// TestWaitARolloutStillUnderWayIsNotSuperseded: a rollout of B is under
// way when commit C lands that leaves this object's spec alone (or whose
// change waits for B's rollout): the controller goes on with B, which goes
// live, and the commit status of B becomes success. The wait for B goes
// on while the annotation says C, is done when B goes live, fails with the
// reason when B's rollout aborts, and says "superseded" only once the
// controller moved on to C.
func TestWaitARolloutStillUnderWayIsNotSuperseded(t *testing.T) {
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

// TestWaitASuspendedFirstCommitIsDone: for a first commit whose template
// is suspended FLIP-503 starts no FlinkDeployment; the state stays
// INITIALIZING_BLUE with job SUSPENDED and the commit as target. "suspended
// as asked" is exit 0 (help text, commit status), not a wait into the
// timeout.
func TestWaitASuspendedFirstCommitIsDone(t *testing.T) {
	p := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.InitializingBlue,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobSuspended}, TargetRevision: rev(shaB)})
	v := (&fbgdRevision{want: commitRef(shaB)}).judge(p)
	require.NoError(t, v.err)
	assert.True(t, v.done, v.line)
}

// TestWaitAfterARetryRequestFollowsTheRetry: after `bg-gitops retry fbgd
// job` (no --wait), the CI gate `wait fbgd job --for-revision B` reads a
// status that, until the controller reads the retry, still says how the
// last attempt ended (FAILING, Stalled). The wait follows the retried
// rollout instead of exiting 3 on the failure it replaces; once the retry
// is handled, a failure is the outcome.
func TestWaitAfterARetryRequestFollowsTheRetry(t *testing.T) {
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

func TestGitRepositoryRevisionJudge(t *testing.T) {
	gr := func(fetched, attempted, applied string, ready metav1.ConditionStatus) *v1alpha1.GitRepository {
		g := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Generation: 1}}
		g.Status.Artifact = &v1alpha1.Artifact{Revision: fetched}
		g.Status.LastAttemptedRevision, g.Status.LastAppliedRevision = attempted, applied
		g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: ready, Reason: "BuildFailed",
			Message: "missing.yaml", ObservedGeneration: 1}}
		return g
	}
	j := &gitRepositoryRevision{want: commitRef(shaB)}
	v := j.judge(gr(rev(shaA), rev(shaA), rev(shaA), metav1.ConditionTrue))
	assert.False(t, v.done)
	assert.NoError(t, v.err)
	assert.Contains(t, v.line, "waiting for bbbbbbbbbbbb")

	v = j.judge(gr(rev(shaB), rev(shaB), rev(shaB), metav1.ConditionTrue))
	assert.True(t, v.done)

	v = (&gitRepositoryRevision{want: commitRef(shaB)}).judge(gr(rev(shaB), rev(shaB), rev(shaA), metav1.ConditionFalse))
	assert.Equal(t, exitFailed, exitCode(v.err))
	assert.Contains(t, v.err.Error(), "was not applied: BuildFailed: missing.yaml")

	seen := &gitRepositoryRevision{want: commitRef(shaB), seen: true}
	v = seen.judge(gr(rev(shaA), rev(shaA), rev(shaA), metav1.ConditionTrue))
	assert.Equal(t, exitFailed, exitCode(v.err))
	assert.Contains(t, v.err.Error(), "superseded by aaaaaaaaaaaa")

	suspended := gr(rev(shaA), rev(shaA), rev(shaA), metav1.ConditionTrue)
	suspended.Spec.Suspend = true
	v = (&gitRepositoryRevision{want: commitRef(shaB)}).judge(suspended)
	assert.Equal(t, exitCannotAct, exitCode(v.err))
}

// TestWaitAFixIsNotBlamedForTheBrokenCommitBeforeIt: the GitRepository
// shows the revision it starts to apply (startRevision:
// lastAttemptedRevision, Reconciling True) before the apply, and leaves
// Ready as the previous reconcile set it. After a broken commit, Ready is
// False (BuildFailed of that commit) while the fix is being applied: the
// wait for the fix goes on, it does not exit 3 with the broken commit's
// error.
func TestWaitAFixIsNotBlamedForTheBrokenCommitBeforeIt(t *testing.T) {
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

// TestWaitAnAppliedCommitOfASuspendedGitRepositoryIsDone: a GitRepository
// suspended after it applied the commit has the commit applied
// (lastAppliedRevision), so the wait is done (and a wait for --rollouts
// goes on with the rollouts), not exit 2 "is not applied until resume".
func TestWaitAnAppliedCommitOfASuspendedGitRepositoryIsDone(t *testing.T) {
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

// TestWaitAnAppliedCommitIsAppliedWhateverCameAfter: the commit is applied
// (lastAppliedRevision), but Ready is False for a reason that came after:
// a later broken commit (BuildFailed), or a fetch that fails on a later
// poll (the Git server is down). The commit is on the cluster and its
// rollouts can be followed, so the wait is done; it does not wait for
// Ready True into its timeout (exit 4).
func TestWaitAnAppliedCommitIsAppliedWhateverCameAfter(t *testing.T) {
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
