/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The receiver run alone, as config/receiver runs it (a subtest of
// TestControllerCommand).

package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// testControllerReceiverOnly runs `bg-gitops controller` with the flags of
// config/receiver's Deployment (--receiver-only), and --leader-elect,
// which it ignores, as that Deployment's ServiceAccount with the RBAC of
// config/receiver: a push webhook requests a reconcile, and the process
// runs no reconciler and takes no Lease.
func testControllerReceiverOnly(t *testing.T, env *testenv.Env) {
	ctx := context.Background()
	ns := reconciletest.Namespace(t, env.Client)
	account := installReceiverRBAC(t, env)
	args := append(shippedReceiverArgs(t), "--leader-elect", "--leader-election-namespace", ns)
	c := startControllerProcess(t, "receiver", serviceAccountKubeconfig(t, env, systemNamespace, account), args...)
	c.waitReady(t)

	const token = "receiver-only-token"
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: ns},
		StringData: map[string]string{source.WebhookTokenKey: token}}))
	gr := newTestGitRepository(ns, "jobs", "https://git.example.com/jobs.git", "./app", nil)
	gr.Spec.Webhook = &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "hook"}}
	require.NoError(t, env.Client.Create(ctx, gr))
	gr.Status.WebhookPath = source.WebhookPath([]byte(token), ns, gr.Name) // as the controller publishes it
	require.NoError(t, env.Client.Status().Update(ctx, gr))

	c.until(t, processTimeout, "the receiver requests a reconcile", func() bool {
		req, err := http.NewRequest(http.MethodPost, "http://"+c.receiver+gr.Status.WebhookPath, strings.NewReader(`{"ref":"refs/heads/main"}`))
		require.NoError(t, err)
		req.Header.Set(source.GitLabEventHeader, "Push Hook")
		req.Header.Set(source.GitLabTokenHeader, token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	got := &v1alpha1.GitRepository{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(gr), got))
	assert.NotEmpty(t, got.Annotations[v1alpha1.ReconcileRequestedAtAnnotation])
	_, started := c.reconciles(t, "gitrepository")
	assert.False(t, started, "no GitRepository reconciler runs")
	assert.Empty(t, leaseHolder(t, env, ns), "no Lease taken")
}

// installReceiverRBAC creates the receiver's ServiceAccount, ClusterRole
// and ClusterRoleBinding as config/receiver renders them, and returns the
// name of the account its Deployment runs as.
func installReceiverRBAC(t *testing.T, env *testenv.Env) string {
	t.Helper()
	ctx := context.Background()
	err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNamespace}})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	var account string
	objs := renderKustomization(t, filepath.Join("..", "..", "config", "receiver"))
	for _, u := range objs {
		if u.GetKind() == "Deployment" && u.GetName() == "bg-gitops-receiver" {
			account, _, _ = unstructured.NestedString(u.Object, "spec", "template", "spec", "serviceAccountName")
		}
	}
	require.NotEmpty(t, account)
	for _, u := range objs {
		switch {
		case u.GetKind() == "ServiceAccount" && u.GetName() == account,
			(u.GetKind() == "ClusterRole" || u.GetKind() == "ClusterRoleBinding") && u.GetName() == "bg-gitops-receiver":
			err := env.Client.Create(ctx, u)
			if !apierrors.IsAlreadyExists(err) {
				require.NoError(t, err, "%s %s", u.GetKind(), u.GetName())
			}
		}
	}
	return account
}

// shippedReceiverArgs returns the flags config/receiver runs the receiver
// with, but its addresses (the test's own) and --metrics-secure (the test
// scrapes plain HTTP).
func shippedReceiverArgs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "receiver", "deployment.yaml"))
	require.NoError(t, err)
	d := &appsv1.Deployment{}
	require.NoError(t, yaml.Unmarshal(data, d))
	args := d.Spec.Template.Spec.Containers[0].Args
	require.Equal(t, "controller", args[0])
	var out []string
	for _, a := range args[1:] {
		if !strings.Contains(a, "-bind-address") && a != "--metrics-secure" {
			out = append(out, a)
		}
	}
	require.Contains(t, out, "--receiver-only")
	return out
}
