/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops diff --cluster` against a real API server.

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/review"
)

var driftRuns atomic.Int32

func clusterDiff(t *testing.T, r *prRepo, kubeconfig string) (int, *review.Report) {
	t.Helper()
	res := runCLI(t, "diff", "--repo", r.dir, "--head", "main", "--path", prPath, "--cluster", "--kubeconfig", kubeconfig, "--format", "json")
	require.Contains(t, []int{0, 1}, res.code, res.stderr)
	rep := &review.Report{}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), rep))
	assertNoSecret(t, res.stdout)
	return res.code, rep
}

func changes(rep *review.Report) map[string]review.Change {
	m := map[string]review.Change{}
	for _, o := range rep.Objects {
		m[o.ID()] = o.Change
	}
	return m
}

// TestDiffClusterShowsDrift: --cluster compares the head with what a
// server-side apply would make of the live objects, so a fresh cluster
// shows everything added, an applied one nothing, and a hand edit shows.
func TestDiffClusterShowsDrift(t *testing.T) {
	env := cluster(t)
	ctx := context.Background()
	r := newPRRepo(t)
	// The cluster is shared by the package and outlives a run: the overlay's
	// namespace is made unique so that -count=2 starts from a fresh one.
	ns := fmt.Sprintf("flink-production-%d", driftRuns.Add(1))
	r.git("checkout", "-q", "main")
	r.replace(prPath+"/kustomization.yaml", "namespace: flink-production", "namespace: "+ns)
	r.replace(prPath+"/namespace.yaml", "name: flink-production", "name: "+ns)
	r.commit("namespace of this run")

	code, rep := clusterDiff(t, r, env.Kubeconfig)
	assert.Equal(t, 1, code)
	assert.Equal(t, "cluster", rep.Base.Ref)
	assert.Equal(t, map[string]review.Change{
		"Namespace " + ns: review.Added, "ConfigMap " + ns + "/state-machine-config": review.Added,
		"Secret " + ns + "/state-machine-kafka":               review.Added,
		"PersistentVolumeClaim " + ns + "/state-machine-data": review.Added,
		"ServiceAccount " + ns + "/flink":                     review.Added,
		"Role " + ns + "/flink":                               review.Added,
		"RoleBinding " + ns + "/flink-role-binding":           review.Added,
		"FlinkBlueGreenDeployment " + ns + "/state-machine":   review.Added,
	}, changes(rep))

	objs, _, err := render.BuildRef(r.dir, "main", prPath, render.Options{Revision: "main@sha1:1", Source: "x/y"})
	require.NoError(t, err)
	for _, u := range objs {
		require.NoError(t, objects.Apply(ctx, env.Client, u.DeepCopy()), u.GetName())
	}
	code, rep = clusterDiff(t, r, env.Kubeconfig)
	assert.Equal(t, 0, code, "applied objects, status and stamps do not count: %+v", rep.Objects)

	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: ns, Name: "state-machine-config"}
	require.NoError(t, env.Client.Get(ctx, key, cm))
	cm.Data["KAFKA_TOPIC"] = "hand-edited"
	require.NoError(t, env.Client.Update(ctx, cm, client.FieldOwner("kubectl-edit")))
	// Another test's controller may be writing the object's status: an
	// edit by hand retries on a conflict, as kubectl edit asks one to.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := getFBGD(t, env, ns, "state-machine")
		p.Spec.Template.Spec.Image = "flink:hand-edited"
		return env.Client.Update(ctx, p, client.FieldOwner("kubectl-edit"))
	}))

	code, rep = clusterDiff(t, r, env.Kubeconfig)
	assert.Equal(t, 1, code)
	require.Len(t, rep.Objects, 2, "%+v", rep.Objects)
	assert.Contains(t, rep.Objects[0].Diff, "-  KAFKA_TOPIC: hand-edited\n+  KAFKA_TOPIC: transactions")
	assert.Equal(t, v1alpha1.FlinkBlueGreenDeploymentKind, rep.Objects[1].Kind)
	assert.Equal(t, review.ActionTransitionSavepoint, rep.Objects[1].Deployment.Action, "undoing the hand edit is a transition")
	assert.Equal(t, []string{"image"}, rep.Objects[1].Deployment.Fields)
}

// TestDiffClusterListsWhatWouldBePruned: an object the head no longer has
// shows as removed when the controller would prune it: it is in the
// inventory of the GitRepository that applied the head's live objects
// (named by their bggitops.dev/source, or --source). One kept by
// bggitops.dev/prune: disabled does not show.
func TestDiffClusterListsWhatWouldBePruned(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	cm := func(name, extra string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + extra + "}\ndata: {value: x}\n"
	}
	r.write("app/a.yaml", cm("settings", ""))
	r.write("app/b.yaml", cm("extra", ""))
	r.write("app/c.yaml", cm("kept", ", annotations: {bggitops.dev/prune: disabled}"))
	r.write("app/kustomization.yaml", "namespace: "+ns+"\nresources: [a.yaml, b.yaml, c.yaml]\n")
	r.commit("three")
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + r.dir, Path: "./app", Interval: &metav1.Duration{Duration: time.Hour}}}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	eventually(t, "the first apply", func() bool {
		require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(gr), gr))
		return gr.Status.Inventory != nil && len(gr.Status.Inventory.Entries) == 3
	})

	r.write("app/kustomization.yaml", "namespace: "+ns+"\nresources: [a.yaml]\n")
	r.commit("one")
	res := runCLI(t, "diff", "--repo", r.dir, "--head", "main", "--path", "app", "--cluster", "--kubeconfig", env.Kubeconfig, "--format", "json")
	require.Equal(t, 1, res.code, res.stderr)
	rep := &review.Report{}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), rep))
	assert.Equal(t, map[string]review.Change{"ConfigMap " + ns + "/extra": review.Removed}, changes(rep))

	res = runCLI(t, "diff", "--repo", r.dir, "--head", "main", "--path", "app", "--cluster", "--kubeconfig", env.Kubeconfig,
		"--source", ns+"/app", "--format", "text")
	assert.Equal(t, 1, res.code, res.stderr)
	assert.Contains(t, res.stdout, "- ConfigMap "+ns+"/extra (removed)")
}

// TestDiffClusterSaysWhichChildTheClusterRefuses: with a cluster, diff
// runs the controller's own check of the FlinkDeployment child (a dry-run
// create as the applying identity) and says the change will be refused;
// a child the cluster takes gets no such line.
func TestDiffClusterSaysWhichChildTheClusterRefuses(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	fbgd := func(name, cpu string) string {
		return "apiVersion: bggitops.dev/v1alpha1\nkind: FlinkBlueGreenDeployment\nmetadata: {name: " + name + "}\nspec:\n  template:\n    spec:\n" +
			"      image: flink:1.20\n      flinkVersion: v1_20\n      jobManager: {resource: {memory: 1024m, cpu: 1}}\n" +
			"      taskManager: {resource: {memory: 1024m, cpu: " + cpu + "}}\n      job: {jarURI: local:///opt/flink/job.jar, upgradeMode: stateless}\n"
	}
	r.write("app/good.yaml", fbgd("good", "1"))
	r.write("app/bad.yaml", fbgd("bad", `"1"`))
	r.write("app/kustomization.yaml", "namespace: "+ns+"\nresources: [good.yaml, bad.yaml]\n")
	r.commit("two jobs")
	res := runCLI(t, "diff", "--repo", r.dir, "--head", "main", "--path", "app", "--cluster", "--kubeconfig", env.Kubeconfig, "--format", "json")
	require.Equal(t, 1, res.code, res.stderr)
	rep := &review.Report{}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), rep))
	checks := map[string]string{}
	for _, o := range rep.Objects {
		checks[o.Name] = o.Deployment.Check
	}
	assert.Empty(t, checks["good"])
	assert.Contains(t, checks["bad"], "will be refused: ")
	assert.Contains(t, checks["bad"], "spec.taskManager.resource.cpu")
}
