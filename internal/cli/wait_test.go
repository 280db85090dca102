/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops wait` on a real API server: a commit followed through a
// GitRepository and its rollouts.

package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// progressLine is a line `wait` prints without a terminal.
var progressLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ `)

// pushSpec changes the running job's image (and fault settings) at a new
// revision, as an apply from Git would.
func pushSpec(t *testing.T, env *testenv.Env, ns, image, sha, flinkConfig string) {
	t.Helper()
	require.Eventually(t, func() bool {
		p := getFBGD(t, env, ns, "job")
		p.Spec.Template.Spec.Image = image
		p.Annotations[v1alpha1.RevisionAnnotation] = "main@sha1:" + sha
		if flinkConfig != "" {
			p.Spec.Template.Spec.FlinkConfiguration = &apiextensionsv1.JSON{Raw: []byte(flinkConfig)}
		}
		return env.Client.Update(context.Background(), p) == nil
	}, 5*time.Second, 50*time.Millisecond)
}

func TestWaitForRevisionOfAFlinkBlueGreenDeployment(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	sha1, sha2, sha3 := strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 40)
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(manualFBGD), p))
	p.Namespace, p.Spec.Promotion = ns, nil
	p.Annotations[v1alpha1.RevisionAnnotation] = "main@sha1:" + sha1
	require.NoError(t, env.Client.Create(context.Background(), p))
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}
	wait := func(sha string, args ...string) result {
		return runCLI(t, append(append([]string{"wait", "fbgd", "job", "--for-revision", sha}, args...), kc...)...)
	}

	res := wait(sha1[:7], "--timeout", "60s")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Equal(t, "fbgd "+ns+"/job: 1111111 is live on job-blue, job RUNNING", lastLine(res.stdout))

	// A blue/green transition: followed to the end, one timestamped line
	// per change. The new colour's savepoints will fail.
	pushSpec(t, env, ns, "flink:1.20.1", sha2, `{"state.savepoints.dir": "file:///flink-sp", "bggitops.dev/simulate-savepoint": "fail"}`)
	res = wait(sha2, "--timeout", "60s")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Equal(t, "fbgd "+ns+"/job: 222222222222 is live on job-green, job RUNNING", lastLine(res.stdout))
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	for _, l := range lines[:len(lines)-1] {
		assert.Regexp(t, progressLine, l, "progress lines are timestamped without a terminal")
	}

	// A rollout that fails (the savepoint of job-green): exit 3 with the
	// reason.
	pushSpec(t, env, ns, "flink:1.20.2", sha3, "")
	res = wait(sha3, "--timeout", "60s")
	assert.Equal(t, exitFailed, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "the rollout of 333333333333 failed: ")
	assert.Contains(t, res.stderr, "simulated savepoint failure")

	// The revision that went live before stays live for a wait.
	res = wait(sha2)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, lastLine(res.stdout), "222222222222 went live")

	// A revision that never comes: exit 4 when the timeout passes.
	res = wait(strings.Repeat("4", 12), "--timeout", "2s")
	assert.Equal(t, exitTimedOut, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "timed out after 2s")

	res = wait(sha2, "--timeout", "soon")
	assert.Equal(t, 2, res.code)
	res = runCLI(t, append([]string{"wait", "fbgd", "nope", "--for-revision", sha2}, kc...)...)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "fbgd "+ns+"/nope not found")
}

// fbgdRepo is a repository with one FlinkBlueGreenDeployment under app/.
func fbgdRepo(t *testing.T) *prRepo {
	t.Helper()
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	r.write("app/kustomization.yaml", "resources: [job.yaml]\n")
	spec := strings.Replace(manualFBGD, "  annotations: {bggitops.dev/revision: \"main@sha1:0000000000000000000000000000000000000001\"}\n", "", 1)
	spec = strings.Replace(spec, "  promotion: {mode: Manual}\n", "", 1)
	r.write("app/job.yaml", spec)
	r.commit("job")
	return r
}

func TestWaitForRevisionOfAGitRepositoryAndItsRollouts(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	r := fbgdRepo(t)
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + r.dir, Path: "./app", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}
	wait := func(args ...string) result {
		return runCLI(t, append(append([]string{"wait", "gitrepository", "app", "--for-revision", "HEAD", "--repo", r.dir}, args...), kc...)...)
	}

	res := wait("--rollouts")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	head := r.git("rev-parse", "HEAD")
	assert.Contains(t, res.stdout, "gitrepository "+ns+"/app: applied "+head[:12])
	assert.Equal(t, "fbgd "+ns+"/job: "+head[:12]+" is live on job-blue, job RUNNING", lastLine(res.stdout))

	// A new image: the wait lasts until the new colour runs it.
	r.replace("app/job.yaml", "image: flink:1.20.0", "image: flink:1.20.1")
	head = r.commit("new image")
	require.Equal(t, 0, runCLI(t, append([]string{"reconcile", "gitrepository", "app"}, kc...)...).code)
	res = wait("--rollouts", "--timeout", "auto")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Equal(t, "fbgd "+ns+"/job: "+head[:12]+" is live on job-green, job RUNNING", lastLine(res.stdout))

	// A broken commit is not applied: exit 3 with the reason.
	r.write("app/kustomization.yaml", "resources: [job.yaml, missing.yaml]\n")
	r.commit("broken")
	require.Equal(t, 0, runCLI(t, append([]string{"reconcile", "gitrepository", "app"}, kc...)...).code)
	res = wait("--timeout", "60s")
	assert.Equal(t, exitFailed, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "was not applied")
	assert.Contains(t, res.stderr, "missing.yaml")

	// Suspended: the wait could only time out, so it says why at once.
	require.Equal(t, 0, runCLI(t, append([]string{"suspend", "gitrepository", "app"}, kc...)...).code)
	res = wait()
	assert.Equal(t, exitCannotAct, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "is suspended")
}

// TestWaitForADeletedFBGDExitsFailed: a FlinkBlueGreenDeployment deleted
// while `wait` follows it (by hand, or pruned by a later commit) will never
// run the revision: that is the outcome (3), not a usage or connection
// error (2).
func TestWaitForADeletedFBGDExitsFailed(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	var out bytes.Buffer
	w := &revisionWait{client: c, want: commitRef(shaB), progress: newProgress(&out),
		budget: newBudget(time.Now(), 5*time.Second, false)}
	err := w.fbgds(context.Background(), []types.NamespacedName{{Namespace: "ns", Name: "job"}})
	require.Error(t, err)
	assert.Equal(t, exitFailed, exitCode(err), err.Error())
	assert.Contains(t, err.Error(), "fbgd ns/job was deleted")
}

// TestWaitNoChangeIsLiveAndAClosedWindowTimesOut: the CI gate of
// docs/cli.md on two commits that do not roll anything out right away.
//   - A commit outside the FlinkBlueGreenDeployment's spec: "or nothing to
//     roll out for it" is exit 0 ("changes nothing"), not the timeout (4).
//   - A new image held back by a closed rollout window: the job still runs
//     the old image, so the wait does not exit 0 ("changes nothing"); a
//     closed window has no bound, so it times out (4).
func TestWaitNoChangeIsLiveAndAClosedWindowTimesOut(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	r := fbgdRepo(t)
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + r.dir, Path: "./app", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}
	wait := func(args ...string) result {
		return runCLI(t, append(append([]string{"wait", "gitrepository", "app", "--for-revision", "HEAD", "--repo", r.dir}, args...), kc...)...)
	}
	res := wait("--rollouts")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)

	// A commit that changes nothing of the job.
	r.write("README.md", "docs only\n")
	head := r.commit("docs")
	require.Equal(t, 0, runCLI(t, append([]string{"reconcile", "gitrepository", "app", "--wait"}, kc...)...).code)
	assert.Equal(t, "main@sha1:"+head, getFBGD(t, env, ns, "job").Annotations[v1alpha1.RevisionAnnotation])
	res = wait("--rollouts", "--timeout", "20s")
	assert.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, lastLine(res.stdout), "changes nothing")

	// A closed rollout window, then a new image.
	require.Eventually(t, func() bool {
		g := &v1alpha1.GitRepository{}
		if env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, g) != nil {
			return false
		}
		g.Spec.RolloutWindows = []v1alpha1.RolloutWindow{{Schedule: "0 0 1 1 *", Duration: metav1.Duration{Duration: time.Minute}, TimeZone: "UTC"}}
		return env.Client.Update(context.Background(), g) == nil
	}, 5*time.Second, 50*time.Millisecond)
	r.replace("app/job.yaml", "image: flink:1.20.0", "image: flink:1.20.1")
	head = r.commit("new image")
	require.Equal(t, 0, runCLI(t, append([]string{"reconcile", "gitrepository", "app", "--wait"}, kc...)...).code)
	eventually(t, "the transition waits for the window", func() bool {
		p := getFBGD(t, env, ns, "job")
		c := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ReconcilingCondition)
		return c != nil && c.Reason == "WaitingForRolloutWindow" && commitRef(head).in(p.Status.TargetRevision)
	})
	res = runCLI(t, append([]string{"wait", "fbgd", "job", "--for-revision", head, "--timeout", "3s"}, kc...)...)
	assert.Equal(t, exitTimedOut, res.code, "the job runs flink:1.20.0 until the window opens\nstdout: %s\nstderr: %s", res.stdout, res.stderr)
}
