/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops history` and `rollback` on a real API server: transitions,
// an abort, a rollback, a deleted object.

package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// manualRepo is a repository with the FlinkBlueGreenDeployment "job" in
// promotion mode Manual under app/.
func manualRepo(t *testing.T) *prRepo {
	t.Helper()
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	r.write("app/kustomization.yaml", "resources: [job.yaml]\n")
	r.write("app/job.yaml", strings.Replace(manualFBGD,
		"  annotations: {bggitops.dev/revision: \"main@sha1:0000000000000000000000000000000000000001\"}\n", "", 1))
	r.commit("job")
	return r
}

// pushImage commits a new image, has the GitRepository apply it, and
// waits until the new colour runs beside the old one.
func pushImage(t *testing.T, r *prRepo, kc []string, env *testenv.Env, ns, from, to, newChild string) string {
	t.Helper()
	r.replace("app/job.yaml", "image: "+from, "image: "+to)
	sha := r.commit("image " + to)
	require.Equal(t, 0, runCLI(t, append([]string{"reconcile", "gitrepository", "app", "--wait"}, kc...)...).code)
	eventually(t, newChild+" runs "+to, func() bool {
		c, ok := flinkChild(env, ns, newChild)
		return ok && c.GetDeletionTimestamp() == nil && nestedString(c, "spec", "image") == to &&
			nestedString(c, "status", "jobStatus", "state") == "RUNNING"
	})
	return sha
}

// TestHistoryAndRollback: two transitions and an abort, as `history`
// prints them; `rollback` prints the Git change and the savepoint edit,
// and changes the cluster only while the source GitRepository is
// suspended.
func TestHistoryAndRollback(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}
	r := manualRepo(t)
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + r.dir, Path: "./app", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	res := runCLI(t, append([]string{"wait", "gitrepository", "app", "--for-revision", "HEAD", "--repo", r.dir, "--rollouts"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)

	sha2 := pushImage(t, r, kc, env, ns, "flink:1.20.0", "flink:1.20.1", "job-green")
	require.Equal(t, 0, runCLI(t, append([]string{"promote", "fbgd", "job", "--wait"}, kc...)...).code)
	pushImage(t, r, kc, env, ns, "flink:1.20.1", "flink:1.20.2", "job-blue")
	require.Equal(t, 0, runCLI(t, append([]string{"abort", "fbgd", "job", "--wait"}, kc...)...).code)

	res = runCLI(t, append([]string{"history", "fbgd", "job", "-o", "json"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	var h []v1alpha1.RolloutRecord
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &h))
	require.Len(t, h, 3, res.stdout)
	assert.Equal(t, []v1alpha1.RolloutKind{v1alpha1.RolloutFirst, v1alpha1.RolloutBlueGreen, v1alpha1.RolloutBlueGreen},
		[]v1alpha1.RolloutKind{h[0].Kind, h[1].Kind, h[2].Kind})
	assert.Equal(t, []v1alpha1.RolloutOutcome{v1alpha1.RolloutSucceeded, v1alpha1.RolloutSucceeded, v1alpha1.RolloutAborted},
		[]v1alpha1.RolloutOutcome{h[0].Outcome, h[1].Outcome, h[2].Outcome})
	assert.True(t, commitRef(sha2).in(h[1].Revision))
	assert.Equal(t, h[1].SavepointPath, h[1].RestoredFrom, "green restored from the savepoint of blue")
	require.NotEmpty(t, h[2].SavepointPath, "the aborted rollout took a savepoint of green")

	res = runCLI(t, append([]string{"history", "fbgd", "job"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "OUTCOME")
	assert.Contains(t, res.stdout, "Aborted")

	// The savepoint the aborted rollout took names the revision it was
	// for and the revision of the job it was taken of.
	abortSnap := snapshotIn(t, env, ns, h[2].SavepointName)
	assert.Equal(t, h[2].Revision, abortSnap.GetAnnotations()[v1alpha1.RevisionAnnotation])
	assert.Equal(t, h[1].Revision, abortSnap.GetAnnotations()[v1alpha1.JobRevisionAnnotation])

	// green runs on after the abort and takes a savepoint later: the
	// job's last one, which --from-savepoint offers rather than the
	// aborted rollout's (that would rewind its state).
	last := takeSavepoint(t, env, ns, "job-green", "green-later")

	// Without --apply: the Git change and the edit, nothing on the cluster.
	before := getFBGD(t, env, ns, "job").Generation
	res = runCLI(t, append([]string{"rollback", "fbgd", "job", "--to", "2", "--from-savepoint"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "git checkout "+sha2[:12]+" -- ./app")
	assert.Contains(t, res.stdout, "initialSavepointPath: "+last)
	assert.Contains(t, res.stdout, "* "+last+"  taken ")
	assert.NotContains(t, res.stdout, h[2].SavepointPath, "the aborted rollout's savepoint is not offered")
	assert.Equal(t, before, getFBGD(t, env, ns, "job").Generation, "rollback without --apply changes nothing")

	// The aborted rollout's savepoint, older than the job's last: only
	// when asked twice.
	older := append([]string{"rollback", "fbgd", "job", "--to", "2", "--savepoint", h[2].SavepointPath}, kc...)
	res = runCLI(t, older...)
	assert.Equal(t, 2, res.code, res.stdout)
	assert.Contains(t, res.stderr, "older than the last savepoint")
	res = runCLI(t, append(older, "--older-than-last")...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "initialSavepointPath: "+h[2].SavepointPath)

	// --apply while the source GitRepository applies: refused.
	apply := append([]string{"rollback", "fbgd", "job", "--to", sha2[:7], "--from-savepoint", "--apply", "--repo", r.dir}, kc...)
	res = runCLI(t, apply...)
	assert.Equal(t, exitCannotAct, res.code, res.stdout)
	assert.Contains(t, res.stderr, "GitRepository "+ns+"/app is not suspended")
	assert.Equal(t, before, getFBGD(t, env, ns, "job").Generation)

	// Suspended: the object gets the spec of that revision with the
	// savepoint edit, and the controller starts a new colour from the
	// job's last savepoint (SAVEPOINT_REDEPLOY), not from a new one.
	require.Equal(t, 0, runCLI(t, append([]string{"suspend", "gitrepository", "app"}, kc...)...).code)
	res = runCLI(t, apply...)
	require.Equal(t, 0, res.code, res.stderr)
	eventually(t, "job-blue started from the job's last savepoint", func() bool {
		c, ok := flinkChild(env, ns, "job-blue")
		return ok && c.GetDeletionTimestamp() == nil && nestedString(c, "spec", "job", "initialSavepointPath") == last
	})
	eventually(t, "a fourth rollout in the history", func() bool { return len(getFBGD(t, env, ns, "job").Status.History) == 4 })
	p := getFBGD(t, env, ns, "job")
	assert.Equal(t, last, p.Status.History[3].RestoredFrom)
	assert.Equal(t, "flink:1.20.1", p.Spec.Template.Spec.Image)
	assert.True(t, commitRef(sha2).in(p.Annotations[v1alpha1.RevisionAnnotation]))
}

// snapshotIn reads the FlinkStateSnapshot name of ns.
func snapshotIn(t *testing.T, env *testenv.Env, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u))
	return u
}

// takeSavepoint has the Flink operator take a savepoint of job, as a
// periodic or manual one, and returns its path once completed.
func takeSavepoint(t *testing.T, env *testenv.Env, ns, job, name string) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"backoffLimit": int64(0), "savepoint": map[string]any{"disposeOnDelete": false},
		"jobReference": map[string]any{"kind": "FlinkDeployment", "name": job}}
	require.NoError(t, env.Client.Create(context.Background(), u))
	var path string
	eventually(t, name+" completed", func() bool {
		s := snapshotIn(t, env, ns, name)
		path = nestedString(s, "status", "path")
		return nestedString(s, "status", "state") == "COMPLETED" && path != ""
	})
	return path
}

// TestHistoryOfADeletedDeploymentShowsItsStateRecord: once the object is
// gone, `history` shows the record its deletion kept.
func TestHistoryOfADeletedDeploymentShowsItsStateRecord(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	deployManual(t, env, ns)
	require.NoError(t, env.Client.Delete(context.Background(), getFBGD(t, env, ns, "job")))
	eventually(t, "job gone", func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "job"}, &v1alpha1.FlinkBlueGreenDeployment{}))
	})
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}
	res := runCLI(t, append([]string{"history", "fbgd", "job"}, kc...)...)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "FlinkBlueGreenDeployment "+ns+"/job is gone")
	assert.Contains(t, res.stdout, "job-blue")
	assert.Contains(t, res.stdout, "COMPLETED")

	res = runCLI(t, append([]string{"history", "fbgd", "never-was"}, kc...)...)
	assert.NotEqual(t, 0, res.code)
	assert.Contains(t, res.stderr, "not found")
}
