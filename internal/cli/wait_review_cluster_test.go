/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestReviewWaitClusterNoChangeAndClosedWindow: the CI gate of docs/cli.md
// on two commits that do not roll anything out right away.
//   - A commit outside the FlinkBlueGreenDeployment's spec: "or nothing to
//     roll out for it" is exit 0; it used to run into the timeout (4).
//   - A new image held back by a closed rollout window: the job still runs
//     the old image, so the wait must not exit 0 (it used to say "changes
//     nothing"); a closed window has no bound, so it times out (4).
func TestReviewWaitClusterNoChangeAndClosedWindow(t *testing.T) {
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
