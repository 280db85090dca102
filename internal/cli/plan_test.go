/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// plan_test.go: `bg-gitops plan gitrepository NAME --pr N` end to end — a
// GitRepository synced by the controller from a real git server, its pull
// request heads fetched from refs/pull/N/head and planned against the live
// cluster as its ServiceAccount.

package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

type planJSON struct {
	Outcome string           `json:"outcome"`
	Summary string           `json:"summary"`
	Report  review.Report    `json:"report"`
	Jobs    []prplan.Job     `json:"jobs"`
	Refused []prplan.Refusal `json:"refused"`
}

// deployer is a ServiceAccount that may write what the app path holds in
// ns, and nothing elsewhere.
func deployer(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"flinkbluegreendeployments"}, Verbs: []string{"*"}},
			{APIGroups: []string{v1alpha1.FlinkDeploymentGVK.Group}, Resources: []string{"flinkdeployments"}, Verbs: []string{"*"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: ns}}},
	} {
		require.NoError(t, env.Client.Create(context.Background(), obj))
	}
}

func TestPlanPullRequestFromGitServer(t *testing.T) {
	env := cluster(t)
	ctx := context.Background()
	ns := newNamespace(t, env)
	deployer(t, env, ns)
	root := t.TempDir()
	git := gittest.ServeHTTP(t, root, gittest.HTTPOptions{})
	repo := gittest.NewRepo(t, root, "jobs")
	job := fbgdManifest(t, "orders", nil)
	sha := repo.Commit(map[string]string{
		"app/kustomization.yaml": "resources: [job.yaml, settings.yaml]\n",
		"app/job.yaml":           job,
		"app/settings.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {value: one}\n",
	}, "orders")
	repo.Push("main")
	repo.Git("checkout", "-q", "-b", "pr7")
	prSHA := repo.Commit(map[string]string{
		"app/job.yaml":      strings.Replace(job, "flink:1.20.0", "flink:1.20.1", 1),
		"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {value: two}\n",
	}, "orders on 1.20.1")
	repo.Push("pr7:refs/pull/7/head")
	repo.Git("checkout", "-q", "-b", "pr8", "main")
	repo.Commit(map[string]string{
		"app/kustomization.yaml": "resources: [job.yaml, settings.yaml, theirs.yaml]\n",
		"app/theirs.yaml":        "apiVersion: v1\nkind: Service\nmetadata: {name: theirs}\nspec: {ports: [{port: 80}]}\n",
	}, "a Service, which deployer may not write")
	repo.Push("pr8:refs/pull/8/head")

	gr := newTestGitRepository(ns, "jobs", git.URL+"/jobs.git", "./app", nil)
	gr.Spec.ServiceAccountName = "deployer"
	require.NoError(t, env.Client.Create(ctx, gr))
	eventually(t, "main applied", func() bool {
		return getTestGitRepository(t, env, ns, "jobs").Status.LastAppliedRevision == "main@sha1:"+sha
	})
	eventually(t, "orders ACTIVE_BLUE", fbgdIn(env, t, ns, "orders", v1alpha1.ActiveBlue, v1alpha1.JobRunning))

	res := runCLI(t, "plan", "gitrepository", "jobs", "--pr", "7", "-n", ns, "--kubeconfig", env.Kubeconfig, "--format", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var p planJSON
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &p), res.stdout)
	assert.Equal(t, v1alpha1.PlanSucceeded, p.Outcome)
	assert.Equal(t, "orders: blue/green with savepoint from orders-blue; 1 ConfigMap changed", p.Summary)
	assert.Equal(t, review.Revision{Ref: "refs/pull/7/head", SHA: prSHA}, p.Report.Head)
	require.Len(t, p.Jobs, 1)
	assert.Equal(t, review.ActionTransitionSavepoint, p.Jobs[0].Action)
	assert.Contains(t, p.Jobs[0].Facts, "takes a savepoint of orders-blue and starts orders-green from it")
	assertNoSecret(t, res.stdout)

	res = runCLI(t, "plan", "gitrepository", "jobs", "--pr", "7", "-n", ns, "--kubeconfig", env.Kubeconfig, "--format", "markdown")
	require.Equal(t, 0, res.code, res.stderr)
	assert.True(t, strings.HasPrefix(res.stdout, "<!-- bg-gitops/plan/"+ns+"/jobs -->\n"), res.stdout)
	assert.Contains(t, res.stdout, "pull request #7")

	res = runCLI(t, "plan", "gitrepository", "jobs", "--pr", "8", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 1, res.code, "the dry-run as deployer refuses the Service: %s", res.stderr)
	assert.Contains(t, res.stdout, "plan: Failed")
	assert.Contains(t, res.stdout, "Service "+ns+"/theirs: services \"theirs\" is forbidden: User \"system:serviceaccount:"+ns+":deployer\"")

	res = runCLI(t, "plan", "gitrepository", "jobs", "--pr", "9", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code, "no refs/pull/9/head: %s", res.stdout)
}

// A tenant's GitRepository may name a file:// URL: the CLI, run by an
// admin, must not read the admin's disk for it unless asked to with
// --allow-file-urls, as the controller's flag of that name.
func TestPlanRefusesAFileURLUnlessAllowed(t *testing.T) {
	env := cluster(t)
	ctx := context.Background()
	ns := newNamespace(t, env)
	repo := gittest.NewRepo(t, t.TempDir(), "jobs")
	repo.Commit(map[string]string{
		"app/kustomization.yaml": "resources: [settings.yaml]\n",
		"app/settings.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {value: one}\n",
	}, "settings")
	repo.Push("main")
	repo.Push("main:refs/pull/7/head")
	gr := newTestGitRepository(ns, "jobs", "file://"+repo.Bare, "./app", nil)
	gr.Spec.Suspend = true
	require.NoError(t, env.Client.Create(ctx, gr))

	res := runCLI(t, "plan", "gitrepository", "jobs", "--pr", "7", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.NotEqual(t, 0, res.code)
	assert.Contains(t, res.stderr, "allow-file-urls", res.stdout)

	res = runCLI(t, "plan", "gitrepository", "jobs", "--pr", "7", "-n", ns, "--kubeconfig", env.Kubeconfig, "--allow-file-urls")
	assert.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "plan: Succeeded")
}
