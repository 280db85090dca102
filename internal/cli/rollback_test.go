/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops rollback`: the history entry and savepoint it picks, the
// spec it renders, and how --apply writes it.

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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
)

func TestRollbackFindsTheEntryAndItsSavepoint(t *testing.T) {
	h := threeRollouts()
	i, err := findEntry(h, "2")
	require.NoError(t, err)
	assert.Equal(t, 1, i)
	i, err = findEntry(h, shaA[:7])
	require.NoError(t, err)
	assert.Equal(t, 0, i)
	_, err = findEntry(h, "4")
	assert.ErrorContains(t, err, "the history has 3 rollouts")
	_, err = findEntry(h, "1234567")
	assert.ErrorContains(t, err, "no rollout of that revision")

	p := &v1alpha1.FlinkBlueGreenDeployment{}
	e := savepointEdit(p, "file:///sp/savepoint-2")
	assert.Equal(t, "initialSavepointPath: file:///sp/savepoint-2\nsavepointRedeployNonce: 1\n", e.yaml)
	assert.Equal(t, int64(1), e.nonce)
	n := int64(4)
	p.Spec.Template.Spec.Job = &v1alpha1.JobSpec{SavepointRedeployNonce: &n}
	assert.Contains(t, savepointEdit(p, "x").yaml, "savepointRedeployNonce: 5")
}

// TestRollbackSavepointIsOfThatRevisionsJob: --from-savepoint offers the
// savepoint taken of the job that ran that revision when a rollout really
// replaced it, or its last one, never one of another job: here #2 (shaB
// to green) aborted, #3 (shaC) deployed green anew and #4 took a
// savepoint of shaC's job, which must not be offered as shaB's; the
// savepoint #2 took of blue (aborted) is not blue's last one, taken after.
func TestRollbackSavepointIsOfThatRevisionsJob(t *testing.T) {
	shaD := strings.Repeat("d", 40)
	h := []v1alpha1.RolloutRecord{
		{Revision: rev(shaA), Kind: v1alpha1.RolloutFirst, To: "job-blue", StartedAt: *at(0), FinishedAt: at(time.Minute),
			Outcome: v1alpha1.RolloutSucceeded},
		{Revision: rev(shaB), Kind: v1alpha1.RolloutBlueGreen, From: "job-blue", To: "job-green", SavepointName: "blue-1", SavepointPath: "/sp/blue-of-A-1",
			RestoredFrom: "/sp/blue-of-A-1", StartedAt: *at(time.Hour), FinishedAt: at(2 * time.Hour), Outcome: v1alpha1.RolloutAborted, Reason: "not ready"},
		{Revision: rev(shaC), Kind: v1alpha1.RolloutBlueGreen, From: "job-blue", To: "job-green", SavepointName: "blue-2", SavepointPath: "/sp/blue-of-A-2",
			RestoredFrom: "/sp/blue-of-A-2", StartedAt: *at(3 * time.Hour), FinishedAt: at(4 * time.Hour), Outcome: v1alpha1.RolloutSucceeded},
		{Revision: rev(shaD), Kind: v1alpha1.RolloutBlueGreen, From: "job-green", To: "job-blue", SavepointName: "green-1", SavepointPath: "/sp/green-of-C",
			RestoredFrom: "/sp/green-of-C", StartedAt: *at(5 * time.Hour), FinishedAt: at(6 * time.Hour), Outcome: v1alpha1.RolloutSucceeded},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		completedSnapshot("blue-1", "job-blue", "/sp/blue-of-A-1", t0.Add(time.Hour)),
		completedSnapshot("blue-periodic", "job-blue", "/sp/blue-of-A-periodic", t0.Add(2*time.Hour+time.Minute)),
		completedSnapshot("blue-2", "job-blue", "/sp/blue-of-A-2", t0.Add(3*time.Hour)),
		completedSnapshot("green-1", "job-green", "/sp/green-of-C", t0.Add(5*time.Hour)),
	).Build()
	choose := func(i int) *savepointChoice {
		ch, err := chooseSavepoints(context.Background(), c, "ns", h, i)
		require.NoError(t, err)
		return ch
	}
	pick := func(i int) string {
		p, err := choose(i).pick("", false)
		require.NoError(t, err)
		return p
	}
	assert.NotEqual(t, "/sp/green-of-C", pick(1), "a savepoint of shaC's job offered as shaB's")
	assert.Equal(t, "/sp/green-of-C", pick(2))
	assert.Equal(t, "/sp/blue-of-A-2", pick(0), "the rollout that replaced shaA's job took it")

	ch := choose(0)
	_, err := ch.pick("/sp/blue-of-A-1", false)
	assert.ErrorContains(t, err, "older than the last savepoint", "the savepoint of the aborted rollout rewinds the state")
	p, err := ch.pick("/sp/blue-of-A-1", true)
	require.NoError(t, err)
	assert.Equal(t, "/sp/blue-of-A-1", p, "asked twice")
	var out bytes.Buffer
	ch.print(&out, t0.Add(3*time.Hour+time.Minute), "/sp/blue-of-A-2")
	assert.Contains(t, out.String(), "* /sp/blue-of-A-2  taken 60s ago  (taken when "+shortRevision(rev(shaC))+" replaced it, its last)")
	assert.NotContains(t, out.String(), "blue-of-A-1")

	// A savepoint the job took after the replacement's, before it
	// stopped: the listing says the replacement's needs asking twice.
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		completedSnapshot("blue-2", "job-blue", "/sp/blue-of-A-2", t0.Add(3*time.Hour)),
		completedSnapshot("blue-late", "job-blue", "/sp/blue-of-A-late", t0.Add(3*time.Hour+30*time.Second))).Build()
	out.Reset()
	choose(0).print(&out, t0.Add(3*time.Hour+time.Minute), "/sp/blue-of-A-late")
	assert.Contains(t, out.String(), "  /sp/blue-of-A-2  taken 60s ago  (taken when "+shortRevision(rev(shaC))+" replaced it, older than its last: only with --older-than-last)")
	assert.Contains(t, out.String(), "* /sp/blue-of-A-late")

	// The replacement's snapshot pruned: its savepoint is still the last.
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		completedSnapshot("blue-periodic", "job-blue", "/sp/blue-of-A-periodic", t0.Add(2*time.Hour+time.Minute))).Build()
	assert.Equal(t, "/sp/blue-of-A-2", pick(0), "a savepoint before the replacement offered")
}

// completedSnapshot is a completed FlinkStateSnapshot of job.
func completedSnapshot(name, job, path string, taken time.Time) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetCreationTimestamp(metav1.NewTime(taken))
	u.Object["spec"] = map[string]any{"jobReference": map[string]any{"kind": "FlinkDeployment", "name": job}}
	u.Object["status"] = map[string]any{"state": "COMPLETED", "path": path, "resultTimestamp": taken.UTC().Format(time.RFC3339Nano)}
	return u
}

// TestRollbackSpecAtMatchesTheNamespace: a GitRepository may render
// objects of the same name into several namespaces (no targetNamespace),
// so specAt matches the rendered FlinkBlueGreenDeployment by namespace as
// well as kind and name: --apply writes this namespace's job spec, not
// another's.
func TestRollbackSpecAtMatchesTheNamespace(t *testing.T) {
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

// TestRollbackWithoutFromSavepointKeepsTheState: rolling back to a
// revision whose savepointRedeployNonce differs from the running spec's
// would be a SAVEPOINT_REDEPLOY: the new colour would start from that old
// revision's initialSavepointPath, not from a savepoint of the running
// job, dropping the state since although --from-savepoint was not asked.
// --apply keeps the running nonce and path, so the rollback is an ordinary
// stateful transition.
func TestRollbackWithoutFromSavepointKeepsTheState(t *testing.T) {
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

// TestRollbackApplyRetriesAConflict: --apply reads the object, renders
// the old revision, and updates the object. A status write of the
// controller meanwhile (it writes status during every transition) makes
// the update of the object read at the start conflict; --apply reads
// again and retries rather than exit 2 in the middle of an incident.
func TestRollbackApplyRetriesAConflict(t *testing.T) {
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

// TestRollbackOfAnEntryWithoutRevisionRefuses: a FlinkBlueGreenDeployment
// applied by hand has no revision annotation, so its history entries have
// no revision. `rollback --to 1` refuses (exit 2, "no revision") rather
// than print "git checkout - -- <dir>": `-` is the previously checked-out
// branch, so copying the command would restore files from an unrelated
// branch.
func TestRollbackOfAnEntryWithoutRevisionRefuses(t *testing.T) {
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
