/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
)

// savepointOf looks for "the savepoint taken of the job that ran that
// revision when the next rollout replaced it". It took the first later
// rollout *from* the same colour, even when that colour had got a new job
// in between: here #2 (shaB to green) aborted, #3 (shaC) deployed green
// anew and #4 took a savepoint of shaC's job. `rollback --to 2
// --from-savepoint` offered that savepoint as shaB's state.
func TestReviewRollbackSavepointIsOfThatRevisionsJob(t *testing.T) {
	shaD := strings.Repeat("d", 40)
	h := []v1alpha1.RolloutRecord{
		{Revision: rev(shaA), Kind: v1alpha1.RolloutFirst, To: "job-blue", StartedAt: *at(0), FinishedAt: at(time.Minute),
			Outcome: v1alpha1.RolloutSucceeded},
		{Revision: rev(shaB), Kind: v1alpha1.RolloutBlueGreen, From: "job-blue", To: "job-green", SavepointPath: "/sp/blue-of-A-1",
			RestoredFrom: "/sp/blue-of-A-1", StartedAt: *at(time.Hour), FinishedAt: at(2 * time.Hour), Outcome: v1alpha1.RolloutAborted, Reason: "not ready"},
		{Revision: rev(shaC), Kind: v1alpha1.RolloutBlueGreen, From: "job-blue", To: "job-green", SavepointPath: "/sp/blue-of-A-2",
			RestoredFrom: "/sp/blue-of-A-2", StartedAt: *at(3 * time.Hour), FinishedAt: at(4 * time.Hour), Outcome: v1alpha1.RolloutSucceeded},
		{Revision: rev(shaD), Kind: v1alpha1.RolloutBlueGreen, From: "job-green", To: "job-blue", SavepointPath: "/sp/green-of-C",
			RestoredFrom: "/sp/green-of-C", StartedAt: *at(5 * time.Hour), FinishedAt: at(6 * time.Hour), Outcome: v1alpha1.RolloutSucceeded},
	}
	assert.NotEqual(t, "/sp/green-of-C", savepointOf(h, 1), "a savepoint of shaC's job offered as shaB's")
	assert.Equal(t, "/sp/green-of-C", savepointOf(h, 2))
	assert.Equal(t, "/sp/blue-of-A-1", savepointOf(h, 0), "the first rollout from blue took it of shaA's job")
}

// specAt matched the rendered FlinkBlueGreenDeployment by kind and name
// only. A GitRepository may render objects of the same name into several
// namespaces (no targetNamespace): --apply then wrote another
// namespace's job spec into this one.
func TestReviewRollbackSpecAtMatchesTheNamespace(t *testing.T) {
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	r.write("app/kustomization.yaml", "resources: [a.yaml, b.yaml]\n")
	base := strings.Replace(manualFBGD, "  annotations: {bggitops.dev/revision: \"main@sha1:0000000000000000000000000000000000000001\"}\n", "", 1)
	r.write("app/a.yaml", strings.Replace(strings.Replace(base, "name: job\n", "name: job\n  namespace: team-a\n", 1), "flink:1.20.0", "flink:team-a", 1))
	r.write("app/b.yaml", strings.Replace(strings.Replace(base, "name: job\n", "name: job\n  namespace: team-b\n", 1), "flink:1.20.0", "flink:team-b", 1))
	sha := r.commit("two teams")
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "job"}}
	spec, err := specAt(r.dir, rev(sha), "./app", p)
	require.NoError(t, err)
	assert.Equal(t, "flink:team-b", spec.Template.Spec.Image)
}

// Rolling back to a revision whose savepointRedeployNonce differs from
// the running spec's is a SAVEPOINT_REDEPLOY: the new colour starts from
// that old revision's initialSavepointPath, not from a savepoint of the
// running job — the state since is dropped although --from-savepoint was
// not asked. --apply keeps the running nonce and path, so the rollback is
// an ordinary stateful transition.
func TestReviewRollbackWithoutFromSavepointKeepsTheState(t *testing.T) {
	one, two := int64(1), int64(2)
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job",
		Annotations: map[string]string{v1alpha1.RevisionAnnotation: rev(shaB)}}}
	p.Spec.Template.Spec.Image = "flink:new"
	p.Spec.Template.Spec.Job = &v1alpha1.JobSpec{JarURI: "local:///job.jar", UpgradeMode: "savepoint",
		InitialSavepointPath: "/user/sp-2", SavepointRedeployNonce: &two}
	old := p.Spec.DeepCopy()
	old.Template.Spec.Image = "flink:old"
	old.Template.Spec.Job.InitialSavepointPath, old.Template.Spec.Job.SavepointRedeployNonce = "/user/sp-1", &one

	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p).Build()
	cur := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "job"}, cur))
	var out bytes.Buffer
	require.NoError(t, applyRollback(context.Background(), c, &out, cur, old, rev(shaA), nil))
	got := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "job"}, got))
	assert.Equal(t, "flink:old", got.Spec.Template.Spec.Image)
	require.NotNil(t, got.Spec.Template.Spec.Job.SavepointRedeployNonce)
	assert.Equal(t, int64(2), *got.Spec.Template.Spec.Job.SavepointRedeployNonce,
		"nonce 2 -> 1 redeploys from /user/sp-1 and drops the running job's state")
	assert.Equal(t, "/user/sp-2", got.Spec.Template.Spec.Job.InitialSavepointPath)
}

// --apply read the object, rendered the old revision, and updated the
// object read at the start: any status write of the controller meanwhile
// (it writes status during every transition) fails the update with a
// conflict, exit 2 in the middle of an incident.
func TestReviewRollbackApplyRetriesAConflict(t *testing.T) {
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job",
		Annotations: map[string]string{v1alpha1.RevisionAnnotation: rev(shaB)}}}
	p.Spec.Template.Spec.Image = "flink:new"
	p.Spec.Template.Spec.Job = &v1alpha1.JobSpec{JarURI: "local:///job.jar"}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p).WithStatusSubresource(p).Build()
	key := types.NamespacedName{Namespace: "ns", Name: "job"}
	stale := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, c.Get(context.Background(), key, stale))
	// The controller writes status after the CLI read the object.
	fresh := stale.DeepCopy()
	fresh.Status.BlueGreenState = v1alpha1.ActiveBlue
	require.NoError(t, c.Status().Update(context.Background(), fresh))

	old := stale.Spec.DeepCopy()
	old.Template.Spec.Image = "flink:old"
	var out bytes.Buffer
	require.NoError(t, applyRollback(context.Background(), c, &out, stale, old, rev(shaA), nil))
	got := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, c.Get(context.Background(), key, got))
	assert.Equal(t, "flink:old", got.Spec.Template.Spec.Image)
	assert.Equal(t, rev(shaA), got.Annotations[v1alpha1.RevisionAnnotation])
}

// A FlinkBlueGreenDeployment applied by hand has no revision annotation,
// so its history entries have no revision. `rollback --to 1` printed
// "git checkout - -- <dir>": `-` is the previously checked-out branch, so
// copying the command restores files from an unrelated branch.
func TestReviewRollbackOfAnEntryWithoutRevisionRefuses(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(manualFBGD), p))
	p.Namespace, p.Annotations = ns, nil
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, "a first rollout in the history", func() bool { return len(getFBGD(t, env, ns, "job").Status.History) == 1 })
	res := runCLI(t, "rollback", "fbgd", "job", "--to", "1", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.NotContains(t, res.stdout, "git checkout - --")
	assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "no revision")
}
