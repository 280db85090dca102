/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of the request verbs (reconcile, suspend, resume, promote, abort, retry)
// and their --wait.

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

const manualFBGD = `
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: job
  annotations: {bggitops.dev/revision: "main@sha1:0000000000000000000000000000000000000001"}
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: "10 min"
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "200ms"
    bggitops.dev/savepoint-timeout: "10 min"
  promotion: {mode: Manual}
  template:
    spec:
      image: flink:1.20.0
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp"}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
`

// lastLine is the final line --wait prints.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// newImage starts a transition to image at revision rev and waits until
// the new colour runs beside the old one (promotion mode Manual).
func newImage(t *testing.T, env *testenv.Env, ns, image, rev, newChild string) {
	t.Helper()
	require.Eventually(t, func() bool {
		p := getFBGD(t, env, ns, "job")
		p.Spec.Template.Spec.Image = image
		p.Annotations[v1alpha1.RevisionAnnotation] = rev
		return env.Client.Update(context.Background(), p) == nil
	}, 5*time.Second, 50*time.Millisecond)
	// The new colour of this commit (not a previous one still being
	// deleted under the same name) runs.
	eventually(t, newChild+" ready beside the old colour", func() bool {
		c, ok := flinkChild(env, ns, newChild)
		return ok && c.GetDeletionTimestamp() == nil && nestedString(c, "spec", "image") == image &&
			nestedString(c, "status", "jobStatus", "state") == "RUNNING"
	})
}

// deployManual creates manualFBGD in ns and waits until blue runs.
func deployManual(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(manualFBGD), p))
	p.Namespace = ns
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, "ACTIVE_BLUE", fbgdIn(env, t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
}

func TestPromoteAndAbortWait(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	deployManual(t, env, ns)
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}

	rev2 := "main@sha1:0000000000000000000000000000000000000002"
	newImage(t, env, ns, "flink:1.20.1", rev2, "job-green")
	assert.Equal(t, v1alpha1.TransitioningToGreen, getFBGD(t, env, ns, "job").Status.BlueGreenState, "waits for promote")

	res := runCLI(t, append([]string{"promote", "fbgd", "job", "--wait", "--timeout", "40s"}, kc...)...)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Equal(t, "fbgd "+ns+"/job: ACTIVE_GREEN, job RUNNING on job-green ("+shortRevision(rev2)+")", lastLine(res.stdout))
	p := getFBGD(t, env, ns, "job")
	assert.Equal(t, p.Annotations[v1alpha1.PromoteRequestedAtAnnotation], p.Status.LastHandledPromoteAt)
	assert.NotNil(t, p.Status.Savepoint, "promoted green started from a savepoint of blue")

	newImage(t, env, ns, "flink:1.20.2", "main@sha1:0000000000000000000000000000000000000003", "job-blue")
	res = runCLI(t, append([]string{"abort", "flinkbluegreendeployment", "job", "--wait", "--timeout", "40s"}, kc...)...)
	require.Equal(t, 0, res.code, "an abort that keeps the old colour succeeded; stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, lastLine(res.stdout), "fbgd "+ns+"/job: ACTIVE_GREEN")
	assert.Contains(t, lastLine(res.stdout), "job RUNNING on job-green ("+shortRevision(rev2)+")", "the old colour stays")
	blue, _ := flinkChild(env, ns, "job-blue")
	assert.Equal(t, "suspended", nestedString(blue, "spec", "job", "state"))
}

func TestRequestWithoutWaitAndUnknownObject(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	res := runCLI(t, "retry", "fbgd", "nope", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "fbgd "+ns+"/nope not found")
	res = runCLI(t, "reconcile", "bggr", "nope", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "gitrepository "+ns+"/nope not found")
	res = runCLI(t, "promote", "fbgd", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code, "NAME is required")
}

// gitRepo is a repository with one ConfigMap under app/.
func gitRepo(t *testing.T, value string) *prRepo {
	t.Helper()
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	r.write("app/kustomization.yaml", "resources: [configmap.yaml]\n")
	setValue(r, value)
	return r
}

func setValue(r *prRepo, value string) string {
	r.write("app/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {value: "+value+"}\n")
	return r.commit("value " + value)
}

func configValue(t *testing.T, env *testenv.Env, ns string) string {
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
		return ""
	}
	return cm.Data["value"]
}

func TestGitRepositoryVerbs(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	r := gitRepo(t, "one")
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + r.dir, Path: "./app", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	eventually(t, "first apply", func() bool { return configValue(t, env, ns) == "one" })
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}

	sha := setValue(r, "two")
	res := runCLI(t, append([]string{"reconcile", "gitrepository", "app", "--wait", "--timeout", "30s"}, kc...)...)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Equal(t, "gitrepository "+ns+"/app: Ready, revision main@sha1:"+sha, lastLine(res.stdout))
	assert.Equal(t, "two", configValue(t, env, ns), "the reconcile applied the new commit before --wait returned")

	res = runCLI(t, append([]string{"suspend", "gitrepository", "app"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	gr = &v1alpha1.GitRepository{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, gr))
	assert.Equal(t, "true", gr.Annotations[v1alpha1.SuspendAnnotation])
	sha = setValue(r, "three")
	// A suspended GitRepository leaves reconcile requests unhandled: --wait
	// could only time out, so it fails at once and says why (exit 2); the
	// request without --wait is made, and waits for the resume.
	res = runCLI(t, append([]string{"reconcile", "bggr", "app", "--wait", "--timeout", "2s"}, kc...)...)
	assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "gitrepository "+ns+"/app is suspended")
	res = runCLI(t, append([]string{"reconcile", "bggr", "app"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	// The controller has its chance: it records a new generation even
	// while suspended, in a reconcile that reads the request and could
	// fetch the new commit.
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, gr))
	gr.Spec.Interval = &metav1.Duration{Duration: 2 * time.Hour}
	require.NoError(t, env.Client.Update(context.Background(), gr))
	eventually(t, "the suspended generation observed", func() bool {
		require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, gr))
		return gr.Status.ObservedGeneration == gr.Generation
	})
	assert.NotEqual(t, gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation], gr.Status.LastHandledReconcileAt, "the request is not handled")
	assert.Equal(t, "two", configValue(t, env, ns), "a suspended GitRepository applies nothing")

	res = runCLI(t, append([]string{"resume", "gitrepository", "app", "--wait", "--timeout", "30s"}, kc...)...)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Equal(t, "gitrepository "+ns+"/app: Ready, revision main@sha1:"+sha, lastLine(res.stdout))
	assert.Equal(t, "three", configValue(t, env, ns))
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, gr))
	assert.NotContains(t, gr.Annotations, v1alpha1.SuspendAnnotation)

	r.write("app/kustomization.yaml", "resources: [configmap.yaml, missing.yaml]\n")
	r.commit("broken")
	res = runCLI(t, append([]string{"reconcile", "gitrepository", "app", "--wait", "--timeout", "30s"}, kc...)...)
	assert.Equal(t, exitFailed, res.code, "stdout: %s", res.stdout)
	assert.Contains(t, lastLine(res.stdout), "gitrepository "+ns+"/app: not ready")
	assert.Contains(t, res.stderr, "missing.yaml")
}

func TestRetryWaitReportsFailure(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(manualFBGD), p))
	p.Namespace = ns
	p.Spec.Promotion = nil
	require.NoError(t, p.Spec.Template.Spec.FlinkConfiguration.UnmarshalJSON(
		[]byte(`{"state.savepoints.dir": "file:///flink-sp", "bggitops.dev/simulate-savepoint": "fail"}`)))
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, "ACTIVE_BLUE", fbgdIn(env, t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	require.Eventually(t, func() bool {
		p := getFBGD(t, env, ns, "job")
		p.Spec.Template.Spec.Image = "flink:1.20.1"
		return env.Client.Update(context.Background(), p) == nil
	}, 5*time.Second, 50*time.Millisecond)
	eventually(t, "savepoint failure", fbgdIn(env, t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))

	// A failure is exit 3, a timeout exit 4.
	res := runCLI(t, "retry", "fbgd", "job", "-n", ns, "--kubeconfig", env.Kubeconfig, "--wait", "--timeout", "40s")
	assert.Equal(t, exitFailed, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.NotContains(t, res.stderr, "timed out")
	assert.Contains(t, lastLine(res.stdout), "ACTIVE_BLUE, rollout FAILED, job RUNNING")
	assert.Contains(t, res.stderr, "simulated savepoint failure")
	p = getFBGD(t, env, ns, "job")
	assert.Equal(t, p.Annotations[v1alpha1.RetryRequestedAtAnnotation], p.Status.LastHandledRetryAt, "the retry was handled")

	// Nothing waits for a promotion: the command says so, with the state,
	// before it asks anything of the controller (exit 3, like a request
	// whose outcome is not what was asked).
	res = runCLI(t, "promote", "fbgd", "job", "-n", ns, "--kubeconfig", env.Kubeconfig, "--wait", "--timeout", "40s")
	assert.Equal(t, exitFailed, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "nothing to promote: fbgd "+ns+"/job is ACTIVE_BLUE, rollout FAILED, job RUNNING; there is no transition waiting for a promotion")
	assert.NotContains(t, getFBGD(t, env, ns, "job").Annotations, v1alpha1.PromoteRequestedAtAnnotation, "no request was made")
	res = runCLI(t, "abort", "fbgd", "job", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, exitFailed, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "nothing to abort: fbgd "+ns+"/job is ACTIVE_BLUE, rollout FAILED, job RUNNING; there is no transition in progress")
}

// TestVerbsOnASuspendedGitRepositorySayWhyAtOnce: reconcile --wait on a
// suspended GitRepository, and resume --wait while spec.suspend is true,
// would wait for their whole timeout: they fail at once, saying why.
func TestVerbsOnASuspendedGitRepositorySayWhyAtOnce(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "jobs", Namespace: ns,
		Annotations: map[string]string{v1alpha1.SuspendAnnotation: "true"}},
		Spec: v1alpha1.GitRepositorySpec{URL: "https://git.example/jobs.git", Interval: &metav1.Duration{Duration: time.Hour}}}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}

	// Exit 2, not the 3 of a timeout: refused before anything is asked.
	res := runCLI(t, append([]string{"reconcile", "gitrepository", "jobs", "--wait", "--timeout", "5m"}, kc...)...)
	assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "gitrepository "+ns+"/jobs is suspended")

	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(gr), gr))
	gr.Spec.Suspend = true
	require.NoError(t, env.Client.Update(context.Background(), gr))
	res = runCLI(t, append([]string{"resume", "gitrepository", "jobs", "--wait", "--timeout", "5m"}, kc...)...)
	assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "spec.suspend: true")

	// Without --wait too, a verb spec.suspend leaves nothing to do for
	// says so at once, naming the field to change in Git, and asks
	// nothing. A plain resume still removes the suspend annotation.
	res = runCLI(t, append([]string{"reconcile", "gitrepository", "jobs"}, kc...)...)
	assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "has spec.suspend: true, which reconcile does not change: set it to false in Git")
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(gr), gr))
	assert.NotContains(t, gr.Annotations, v1alpha1.ReconcileRequestedAtAnnotation, "nothing was requested")
	res = runCLI(t, append([]string{"resume", "gitrepository", "jobs"}, kc...)...)
	assert.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	res = runCLI(t, append([]string{"resume", "gitrepository", "jobs"}, kc...)...)
	assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "which resume does not change: set it to false in Git")
}

// TestAbortWaitFailsWhenTheTransitionFinishedFirst: `abort --wait` races
// the cut-over. When the precheck saw a transition in progress but the
// transition finished before the controller read the request, the
// controller acknowledges it as ignored (AbortIgnored) and the object
// settles ACTIVE_GREEN, job RUNNING on the new revision. Nothing was
// aborted, and exit 0 ("handled and settled well") would tell a script the
// old colour runs: the wait exits 3. Every abort that happens ends in
// FAILING (the transition's outcome); RUNNING after the acknowledgement
// means it came too late.
func TestAbortWaitFailsWhenTheTransitionFinishedFirst(t *testing.T) {
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
		handled: abort.handled, failureIsOutcome: true, progress: newProgress(&out)}
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

// TestRequestWaitWithInvalidTimersMakesNoRequest: `abort --wait --timeout
// auto` on an object whose timers do not parse exits 2 (a usage error,
// "nothing happened") and leaves no request behind. The budget is computed
// before the request is made; an abort annotation left by a refused wait
// would fire whenever the timers are fixed, maybe on a later transition.
func TestRequestWaitWithInvalidTimersMakesNoRequest(t *testing.T) {
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
