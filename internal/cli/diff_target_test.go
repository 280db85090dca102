/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/review"
)

// TestDiffClusterPutsTheHeadInTheSourcesTargetNamespace: manifests
// without a namespace, applied by a GitRepository with a
// spec.targetNamespace, are compared where the controller applies them:
// the applied head shows no change, and the object the head drops shows
// as pruned.
func TestDiffClusterPutsTheHeadInTheSourcesTargetNamespace(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {value: x}\n"
	}
	r.write("app/a.yaml", cm("settings"))
	r.write("app/b.yaml", cm("extra"))
	r.write("app/kustomization.yaml", "resources: [a.yaml, b.yaml]\n")
	r.commit("two")
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + r.dir, Path: "./app", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}}}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	eventually(t, "the first apply", func() bool {
		require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(gr), gr))
		return gr.Status.Inventory != nil && len(gr.Status.Inventory.Entries) == 2
	})
	diff := func() (int, *review.Report) {
		res := runCLI(t, "diff", "--repo", r.dir, "--head", "main", "--path", "app", "--cluster", "--kubeconfig", env.Kubeconfig,
			"--source", ns+"/app", "--format", "json")
		require.Contains(t, []int{0, 1}, res.code, res.stderr)
		rep := &review.Report{}
		require.NoError(t, json.Unmarshal([]byte(res.stdout), rep))
		return res.code, rep
	}
	code, rep := diff()
	assert.Equal(t, 0, code, "the applied head: no change; %+v", rep.Objects)

	r.write("app/kustomization.yaml", "resources: [a.yaml]\n")
	r.commit("one")
	_, rep = diff()
	assert.Equal(t, map[string]review.Change{"ConfigMap " + ns + "/extra": review.Removed}, changes(rep))

	res := runCLI(t, "diff", "--repo", r.dir, "--head", "main", "--path", "app", "--cluster", "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "ConfigMap/settings has no namespace", "without --source, where it goes is not known")
	assert.Contains(t, res.stderr, "--source NAMESPACE/NAME")

	// A source without a targetNamespace leaves it without one: the
	// controller refuses to apply it, and diff says so.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(gr), gr))
		gr.Spec.TargetNamespace = ""
		return env.Client.Update(context.Background(), gr)
	}))
	res = runCLI(t, "diff", "--repo", r.dir, "--head", "main", "--path", "app", "--cluster", "--kubeconfig", env.Kubeconfig, "--source", ns+"/app")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "ConfigMap/settings has no namespace: the controller refuses to apply it")
}

// A child the cluster could not be asked about (its namespace is created
// by the same commit, so the dry-run finds no namespace) is not reported
// as checked: the plan says it was not checked, and why.
func TestDiffClusterSaysWhenAChildCouldNotBeChecked(t *testing.T) {
	env := cluster(t)
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	ns := "not-yet-" + strings.ToLower(strings.ReplaceAll(t.Name(), "Test", ""))[:20]
	r.write("app/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	r.write("app/job.yaml", "apiVersion: bggitops.dev/v1alpha1\nkind: FlinkBlueGreenDeployment\nmetadata: {name: job}\nspec:\n  template:\n    spec:\n"+
		"      image: flink:1.20\n      flinkVersion: v1_20\n      jobManager: {resource: {memory: 1024m, cpu: 1}}\n"+
		"      taskManager: {resource: {memory: 1024m, cpu: \"1\"}}\n      job: {jarURI: local:///opt/flink/job.jar, upgradeMode: stateless}\n")
	r.write("app/kustomization.yaml", "namespace: "+ns+"\nresources: [ns.yaml, job.yaml]\n")
	r.commit("a job in a new namespace")
	res := runCLI(t, "diff", "--repo", r.dir, "--head", "main", "--path", "app", "--cluster", "--kubeconfig", env.Kubeconfig, "--format", "json")
	require.Equal(t, 1, res.code, res.stderr)
	rep := &review.Report{}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), rep))
	for _, o := range rep.Objects {
		if o.Deployment != nil {
			assert.Contains(t, o.Deployment.Check, "not checked against the cluster: ")
			assert.Contains(t, o.Deployment.Check, ns)
		}
	}
}
