/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
)

// `abort --wait` races the cut-over: the precheck saw a transition in
// progress, the transition finished before the controller read the
// request, and the controller acknowledged it as ignored (AbortIgnored):
// ACTIVE_GREEN, job RUNNING on the new revision. Nothing was aborted, so
// exit 0 ("handled and settled well") would tell a script the old colour
// runs. Every abort that happens ends in FAILING (the transition's
// outcome); RUNNING after the acknowledgement means it came too late.
func TestReviewAbortWaitAfterTheTransitionFinishedIsNotSuccess(t *testing.T) {
	const token = "2026-12-01T00:00:00.1Z"
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", Generation: 2,
		Annotations: map[string]string{v1alpha1.AbortRequestedAtAnnotation: token}}}
	p.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{ObservedGeneration: 2, BlueGreenState: v1alpha1.ActiveGreen,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}, ActiveDeployment: "job-green",
		ActiveRevision: rev(shaB), TargetRevision: rev(shaB), LastHandledAbortAt: token}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p).WithStatusSubresource(p).Build()
	abort := fbgdRequest("abort", "Abort", v1alpha1.AbortRequestedAtAnnotation)
	var out bytes.Buffer
	w := &requestWait{client: c, key: types.NamespacedName{Namespace: "ns", Name: "job"}, kind: fbgdKind, token: token,
		acked: abort.acked, failureIsOutcome: true, progress: newProgress(&out)}
	done, err := w.check(context.Background())
	assert.True(t, done)
	require.Error(t, err, "an abort that aborted nothing reported as success: %s", out.String())
	assert.Equal(t, exitFailed, exitCode(err))
	assert.Contains(t, err.Error(), "nothing was aborted")

	// The abort that happened: the old colour active, the rollout FAILING.
	p.Status.BlueGreenState, p.Status.ActiveDeployment, p.Status.ActiveRevision = v1alpha1.ActiveBlue, "job-blue", rev(shaA)
	p.Status.JobStatus.State, p.Status.Error = v1alpha1.JobFailing, "transition to job-green aborted: abort requested"
	require.NoError(t, c.Status().Update(context.Background(), p))
	done, err = w.check(context.Background())
	assert.True(t, done)
	assert.NoError(t, err)
}

// `abort --wait --timeout auto` on an object whose timers do not parse
// used to make the request first and then fail with exit 2 (a usage
// error, "nothing happened"): the abort annotation stayed and fired
// whenever the timers were fixed, maybe on a later transition. The budget
// is computed before the request, so a refusal leaves nothing behind.
func TestReviewRequestWaitWithInvalidTimersMakesNoRequest(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(manualFBGD), p))
	p.Namespace = ns
	p.Spec.Configuration[v1alpha1.AbortGracePeriodKey] = "soon"
	require.NoError(t, env.Client.Create(context.Background(), p))
	// A transition in progress, as far as the precheck can tell.
	require.Eventually(t, func() bool {
		q := getFBGD(t, env, ns, "job")
		q.Status.BlueGreenState, q.Status.ActiveDeployment = v1alpha1.TransitioningToGreen, "job-blue"
		return env.Client.Status().Update(context.Background(), q) == nil
	}, 5*time.Second, 50*time.Millisecond)
	res := runCLI(t, "abort", "fbgd", "job", "--wait", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "--timeout auto")
	_, requested := getFBGD(t, env, ns, "job").Annotations[v1alpha1.AbortRequestedAtAnnotation]
	assert.False(t, requested, "a refused --wait left an abort request behind")
}

// `reconcile gitrepository --wait` after a broken commit, with the fix
// pushed: the reconcile acknowledges the request in the status write that
// shows the new revision being applied (startRevision: Reconciling True),
// while Ready still says how the previous reconcile ended (BuildFailed of
// the broken commit). That is not where it settled: exit 3 with the
// broken commit's error while the fix is applied would be a lie.
func TestReviewReconcileWaitDoesNotSettleWhileApplying(t *testing.T) {
	g := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Generation: 1}}
	g.Status.LastAttemptedRevision, g.Status.LastAppliedRevision = rev(shaB), rev(shaA)
	g.Status.Conditions = []metav1.Condition{
		{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "BuildFailed", Message: "missing.yaml", ObservedGeneration: 1},
		{Type: v1alpha1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: "Progressing", Message: "applying revision " + rev(shaB), ObservedGeneration: 1},
	}
	s := gitRepositoryStanding(g)
	assert.False(t, s.settled, s.line)
}

// A FlinkBlueGreenDeployment deleted while `wait` follows it (by hand, or
// pruned by a later commit) will never run the revision: that is the
// outcome (3), not a usage or connection error (2).
func TestReviewWaitForADeletedFBGDIsAnOutcome(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	var out bytes.Buffer
	w := &revisionWait{client: c, want: commitRef(shaB), progress: newProgress(&out),
		budget: newBudget(time.Now(), 5*time.Second, false)}
	err := w.fbgds(context.Background(), []types.NamespacedName{{Namespace: "ns", Name: "job"}})
	require.Error(t, err)
	assert.Equal(t, exitFailed, exitCode(err), err.Error())
	assert.Contains(t, err.Error(), "fbgd ns/job was deleted")
}

// A wait in CI lasts as long as the rollout's timers (50 minutes with the
// README's production timers). One failed read in between (the API server
// restarting, a load balancer's 503, a dropped connection) ended it with
// exit 2 although nothing about the rollout was known. Transient read
// errors are retried until the deadline; errors that will not go away
// (forbidden, unauthorized) still end the wait at once.
func TestReviewWaitSurvivesATransientReadError(t *testing.T) {
	p := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveGreen,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}, ActiveDeployment: "job-green",
		ActiveRevision: rev(shaB), TargetRevision: rev(shaB)})
	fails := 2
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if fails > 0 {
				fails--
				return apierrors.NewServiceUnavailable("the server is restarting")
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	var out bytes.Buffer
	w := &revisionWait{client: c, want: commitRef(shaB), progress: newProgress(&out),
		budget: newBudget(time.Now(), 10*time.Second, false)}
	err := w.fbgds(context.Background(), []types.NamespacedName{{Namespace: "ns", Name: "job"}})
	require.NoError(t, err, out.String())
	assert.Contains(t, lastLine(out.String()), "is live on job-green")

	forbidden := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewForbidden(v1alpha1.GroupVersion.WithResource("flinkbluegreendeployments").GroupResource(), "job", nil)
		}}).Build()
	w = &revisionWait{client: forbidden, want: commitRef(shaB), progress: newProgress(&out),
		budget: newBudget(time.Now(), 10*time.Second, false)}
	start := time.Now()
	err = w.fbgds(context.Background(), []types.NamespacedName{{Namespace: "ns", Name: "job"}})
	require.Error(t, err)
	assert.Equal(t, -1, exitCode(err), "a plain error: exit 2")
	assert.Less(t, time.Since(start), 2*time.Second)
}

// promote while an in-place change runs (TRANSITIONING_TO_BLUE with
// job-blue active, promotion mode Manual): there is nothing to promote
// (an in-place change needs none), the controller acknowledges the
// request as ignored once the patch is done, and `promote --wait` said
// exit 0. The precheck refuses it like any promote with nothing to act on.
func TestReviewPromoteDuringAnInPlaceChangeHasNothingToPromote(t *testing.T) {
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
	p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	p.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToBlue, ActiveDeployment: "job-blue",
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobReconciling}}
	err := fbgdCanAct("promote")(p, true)
	require.Error(t, err)
	assert.Equal(t, exitNothingToDo, exitCode(err))

	p.Status.BlueGreenState = v1alpha1.TransitioningToGreen
	assert.NoError(t, fbgdCanAct("promote")(p, true), "a blue/green transition waits for a promotion")
}
