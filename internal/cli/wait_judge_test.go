/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
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
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobReconciling}, ActiveRevision: rev(shaA), TargetRevision: rev(shaB)}),
			contains: "TRANSITIONING_TO_GREEN, job RECONCILING, active aaaaaaaaaaaa, rolling out bbbbbbbbbbbb"},
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

func TestResolveRevision(t *testing.T) {
	r := gitRepo(t, "one")
	head := r.git("rev-parse", "HEAD")
	for _, arg := range []string{"HEAD", "main", head, head[:7], rev(head)} {
		c, err := resolveRevision(arg, r.dir)
		require.NoError(t, err, arg)
		assert.True(t, c.in(rev(head)), arg)
	}
	_, err := resolveRevision("nope", r.dir)
	assert.ErrorContains(t, err, "--for-revision nope")
	_, err = resolveRevision("", r.dir)
	assert.ErrorContains(t, err, "--for-revision is required")
	assert.False(t, commitRef(shaA).in(rev(shaB)))
}

func TestTimeoutFlag(t *testing.T) {
	var f timeoutFlag
	require.NoError(t, f.Set("auto"))
	assert.Equal(t, "auto", f.String())
	require.NoError(t, f.Set("90s"))
	assert.Equal(t, "1m30s", f.String())
	assert.Error(t, f.Set("-1s"))
	assert.Error(t, f.Set("soon"))

	p := stampedFBGD(rev(shaA), v1alpha1.FlinkBlueGreenDeploymentStatus{})
	p.Spec.Configuration = map[string]string{
		v1alpha1.AbortGracePeriodKey: "20 min", v1alpha1.SavepointTimeoutKey: "30 min",
		v1alpha1.DeploymentDeletionDelayKey: "1 min", v1alpha1.RescheduleIntervalKey: "15 s"}
	d, err := autoTimeout(p)
	require.NoError(t, err)
	assert.Equal(t, "52m30s", d.String(), "30m savepoint + 20m grace + 1m deletion delay + 2×15s + 1m margin")
}
