/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests that config/rbac's aggregated ClusterRoles give users bound to `edit`
// and `view` what the CLI needs, in their namespace only.

package cli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// TestAggregatedRoles: a user bound to the built-in `edit` role in a
// namespace can promote a FlinkBlueGreenDeployment there and not in
// another namespace where she has `view`, which reads but cannot promote. The test control
// plane runs no kube-controller-manager, whose ClusterRole aggregation
// controller fills `view` and `edit` from the ClusterRoles their
// aggregationRule selects: the test does what it does, from the API
// server's own bootstrap roles and config/rbac's.
func TestAggregatedRoles(t *testing.T) {
	env := cluster(t)
	installAggregatedRoles(t, env)
	aggregate(t, env, "view")
	aggregate(t, env, "edit")
	ns, other := newNamespace(t, env), newNamespace(t, env)
	bind(t, env, ns, "alice", "edit")
	bind(t, env, ns, "bob", "view")
	bind(t, env, other, "alice", "view")
	for _, n := range []string{ns, other} {
		p := &v1alpha1.FlinkBlueGreenDeployment{}
		require.NoError(t, yaml.UnmarshalStrict([]byte(manualFBGD), p))
		p.Namespace = n
		require.NoError(t, env.Client.Create(context.Background(), p))
		eventually(t, n+" ACTIVE_BLUE", fbgdIn(env, t, n, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	}
	for _, n := range []string{ns, other} {
		newImage(t, env, n, "flink:1.20.1", "main@sha1:0000000000000000000000000000000000000002", "job-green")
	}
	as := func(user, n string, args ...string) result {
		return runCLI(t, append(args, "-n", n, "--kubeconfig", env.Kubeconfig, "--as", user)...)
	}

	res := as("bob", ns, "get", "fbgd", "job")
	assert.Equal(t, 0, res.code, "view reads: %s", res.stderr)
	res = as("bob", ns, "promote", "fbgd", "job")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, `cannot patch resource "flinkbluegreendeployments"`)
	res = as("alice", other, "promote", "fbgd", "job")
	assert.Equal(t, 2, res.code, "edit in one namespace grants nothing in another")
	assert.Contains(t, res.stderr, `cannot patch resource "flinkbluegreendeployments"`)

	res = as("alice", ns, "promote", "fbgd", "job", "--wait", "--timeout", "40s")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, lastLine(res.stdout), "ACTIVE_GREEN")
	res = as("alice", ns, "suspend", "gitrepository", "nope")
	assert.Contains(t, res.stderr, "not found", "edit may read GitRepositories (and patch them: the verbs' annotations)")
}

// installAggregatedRoles creates config/rbac's ClusterRoles for app teams.
func installAggregatedRoles(t *testing.T, env *testenv.Env) {
	t.Helper()
	found := 0
	for _, u := range renderKustomization(t, filepath.Join("..", "..", "config", "rbac")) {
		if u.GetKind() != "ClusterRole" || (u.GetName() != "bg-gitops-view" && u.GetName() != "bg-gitops-edit") {
			continue
		}
		found++
		if err := env.Client.Create(context.Background(), u); !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}
	require.Equal(t, 2, found, "config/rbac renders bg-gitops-view and bg-gitops-edit")
}

// aggregate sets the rules of the built-in ClusterRole name to those of
// every ClusterRole its aggregationRule selects, as the ClusterRole
// aggregation controller of kube-controller-manager does.
func aggregate(t *testing.T, env *testenv.Env, name string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: name}, role))
	require.NotNil(t, role.AggregationRule, "the API server's bootstrap role %s aggregates", name)
	all := &rbacv1.ClusterRoleList{}
	require.NoError(t, env.Client.List(ctx, all))
	var rules []rbacv1.PolicyRule
	selected := map[string]bool{}
	for _, sel := range role.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		require.NoError(t, err)
		for _, r := range all.Items {
			if r.Name != name && !selected[r.Name] && s.Matches(labels.Set(r.Labels)) {
				selected[r.Name] = true
				rules = append(rules, r.Rules...)
			}
		}
	}
	require.True(t, selected["bg-gitops-"+name], "%s aggregates bg-gitops-%s (its labels match)", name, name)
	role.Rules = rules
	require.NoError(t, env.Client.Update(ctx, role))
}

// bind grants user the ClusterRole role in namespace ns.
func bind(t *testing.T, env *testenv.Env, ns, user, role string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	require.NoError(t, env.Client.Create(context.Background(), rb))
}
