/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

const repoLayout = "../../examples/repo-layout"

// TestRepoLayoutDryRunsAgainstTheRealCRDs renders every overlay of
// examples/repo-layout as its GitRepository would and sends each object to
// a real kube-apiserver serving our CRDs and the Flink Kubernetes
// Operator's own (internal/testing/testenv/operatorcrds): a server-side apply with
// dryRun=All, in apply order, as the identity the docs (multi-tenancy and
// RBAC) tell a cluster
// admin to set up (flink-system's bg-gitops-applier with config/rbac's
// bg-gitops-applier ClusterRole and examples/repo-layout/platform bound to
// it), so the API server's authorization and its RBAC escalation check of
// the flink Role run too. Each Namespace is then created for real so that
// the objects in it can be checked. The blue FlinkDeployment the
// controller would build from the overlay's FlinkBlueGreenDeployment, and
// the green one started from a savepoint, are then dry-run created with
// the same identity and strict field validation: the Flink CRD carries the
// whole pod schema, so a misspelt field of the pod template is an error,
// not a field the API server drops. No Flink operator runs here (it needs
// a container runtime): this is what a cluster with the operator installed
// accepts, not proof that the job runs.
func TestRepoLayoutDryRunsAgainstTheRealCRDs(t *testing.T) {
	env, err := testenv.Start(testenv.Options{WithoutFlinkCRDs: true})
	testenv.Require(t, err)
	defer env.Stop()
	installRealCRDs(t, env)
	ctx := context.Background()
	applier := platformApplier(t, env)

	entries, err := os.ReadDir(filepath.Join(repoLayout, "overlays"))
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			objs, err := render.Build(repoLayout, "overlays/"+e.Name(), render.Options{
				Revision: "main@sha1:4b825dc642cb6eb9a060e54bf8d69288fbee4904", Source: "flink-system/fraud-detection"})
			require.NoError(t, err)
			objects.Sort(objs)
			kinds := map[string]int{}
			for _, u := range objs {
				kinds[u.GetKind()]++
				require.NoError(t, objects.Apply(ctx, applier, u.DeepCopy(), client.DryRunAll), "dry-run %s", objects.ID(u))
				if u.GetKind() == "Namespace" {
					require.NoError(t, client.IgnoreAlreadyExists(env.Client.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": u.GetName()}}})))
				}
				if u.GetKind() == v1alpha1.FlinkBlueGreenDeploymentKind {
					for _, child := range repoLayoutChildren(t, u) {
						assert.NoError(t, applier.Create(ctx, child, client.DryRunAll, client.FieldValidation("Strict"),
							client.FieldOwner(objects.FieldManager)), "dry-run child %s", child.GetName())
					}
				}
			}
			for _, kind := range []string{"Namespace", "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Secret", v1alpha1.FlinkBlueGreenDeploymentKind} {
				assert.Positive(t, kinds[kind], "the overlay has no %s", kind)
			}
			t.Logf("%d objects accepted: %v", len(objs), kinds)
		})
	}
	require.GreaterOrEqual(t, n, 3, "staging, production and production-s3")

	t.Run("a misspelt pod template field is refused", func(t *testing.T) {
		objs, err := render.Build(repoLayout, "overlays/staging", render.Options{})
		require.NoError(t, err)
		for _, u := range objs {
			if u.GetKind() != v1alpha1.FlinkBlueGreenDeploymentKind {
				continue
			}
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "podTemplate", "spec", "containers")
			containers[0].(map[string]any)["volumeMount"] = containers[0].(map[string]any)["volumeMounts"]
			require.NoError(t, unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "podTemplate", "spec", "containers"))
			err := env.Client.Create(ctx, repoLayoutChildren(t, u)[0], client.DryRunAll, client.FieldValidation("Strict"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), `unknown field "spec.podTemplate.spec.containers[0].volumeMount"`)
		}
	})
}

// platformApplier is a client that acts as flink-system's
// bg-gitops-applier ServiceAccount, given the rights the platform file of
// examples/repo-layout and config/rbac's applier role grant.
func platformApplier(t *testing.T, env *testenv.Env) client.Client {
	t.Helper()
	ctx := context.Background()
	const ns, name = "flink-system", "bg-gitops-applier"
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}))
	for _, file := range []string{"../../config/rbac/applier_role.yaml", filepath.Join(repoLayout, "platform", "applier-rbac.yaml")} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, doc := range strings.Split(string(data), "\n---\n") {
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object), file)
			require.NoError(t, env.Client.Create(ctx, u), "%s: %s", file, u.GetName())
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	require.NoError(t, err)
	return c
}

// repoLayoutChildren builds the two FlinkDeployments of a rendered
// FlinkBlueGreenDeployment as the controller does (childObject): blue as a
// first deployment, green from a savepoint of blue in the job's savepoint
// directory. Without owner references: the parent is not created here.
func repoLayoutChildren(t *testing.T, u *unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, fromMap(u.Object, p))
	savepoints, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "flinkConfiguration", "state.savepoints.dir")
	require.NotEmpty(t, savepoints, "state.savepoints.dir")
	var out []*unstructured.Unstructured
	for _, color := range []bluegreen.Color{bluegreen.Blue, bluegreen.Green} {
		cs := &bluegreen.ChildSpec{Name: bluegreen.ChildName(p.Name, color), Color: color,
			Spec: *p.Spec.Template.Spec.DeepCopy(), Revision: p.Annotations[v1alpha1.RevisionAnnotation]}
		if color == bluegreen.Green {
			cs.Spec.Job.InitialSavepointPath = strings.TrimSuffix(savepoints, "/") + "/savepoint-7f5fdb-b527b87a87d3"
		}
		child, err := childObject(p, cs)
		require.NoError(t, err)
		child.SetOwnerReferences(nil)
		out = append(out, child)
	}
	return out
}
