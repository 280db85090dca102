/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops version`.

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func withVersion(t *testing.T, v string) {
	t.Helper()
	old := Version
	Version = v
	t.Cleanup(func() { Version = old })
}

func TestVersionClientOnly(t *testing.T) {
	withVersion(t, "v1.2.3")
	r := runCLI(t, "version", "--client")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "bg-gitops: v1.2.3\n", r.stdout)
}

// TestVersionOfTheController: the controller's version is the image tag
// of the Deployment labelled as config/default labels it, found in any
// namespace, with its readiness; before there is one, the CLI says so.
func TestVersionOfTheController(t *testing.T) {
	withVersion(t, "v1.2.3")
	env := cluster(t)
	ctx := context.Background()

	r := runCLI(t, "version", "--kubeconfig", env.Kubeconfig)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "bg-gitops: v1.2.3\ncontroller: not found (no Deployment labelled app.kubernetes.io/name=bg-gitops in any namespace)\n", r.stdout)

	ns := newNamespace(t, env)
	labels := map[string]string{"app.kubernetes.io/name": "bg-gitops"}
	replicas := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bg-gitops-controller", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "sidecar", Image: "proxy:9"},
					{Name: "controller", Image: "registry.example:5000/team/bg-gitops:v1.2.2"},
				}},
			},
		},
	}
	require.NoError(t, env.Client.Create(ctx, d))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), d) })
	// No kube-controller-manager runs here: report one ready replica as
	// the Deployment controller would.
	d.Status.Replicas, d.Status.ReadyReplicas = 2, 1
	require.NoError(t, env.Client.Status().Update(ctx, d))

	r = runCLI(t, "version", "--kubeconfig", env.Kubeconfig)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "bg-gitops: v1.2.3\ncontroller: v1.2.2 (image registry.example:5000/team/bg-gitops:v1.2.2, deployment "+
		ns+"/bg-gitops-controller, 1/2 ready)\n", r.stdout)

	t.Run("without the right to list deployments", func(t *testing.T) {
		r := runCLI(t, "version", "--kubeconfig", env.Kubeconfig, "--as", "nobody")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "bg-gitops: v1.2.3\ncontroller: not reachable (list deployments: ")
		assert.Contains(t, r.stdout, `cannot list resource "deployments"`)
	})
}

// TestVersionWithoutACluster: no API server behind the kubeconfig, or no
// kubeconfig at all: the CLI's version, and why the controller's is not.
func TestVersionWithoutACluster(t *testing.T) {
	withVersion(t, "v1.2.3")
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	r := runCLI(t, "version", "--kubeconfig", kubeconfig)
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "bg-gitops: v1.2.3\ncontroller: not reachable ("), r.stdout)
	assert.Contains(t, r.stdout, "127.0.0.1:1")

	t.Setenv("KUBECONFIG", filepath.Join(dir, "missing"))
	t.Setenv("HOME", dir)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	r = runCLI(t, "version")
	require.Equal(t, 0, r.code, r.stderr)
	// client-go then tries kubectl's default, localhost:8080.
	assert.True(t, strings.HasPrefix(r.stdout, "bg-gitops: v1.2.3\ncontroller: not reachable ("), r.stdout)
}

func TestImageVersion(t *testing.T) {
	for image, want := range map[string]string{
		"bg-gitops:v0.1.0":                       "v0.1.0",
		"registry.example:5000/bg-gitops:v0.1.0": "v0.1.0",
		"registry.example:5000/bg-gitops":        "unknown",
		"bg-gitops":                              "unknown",
		"bg-gitops:v0.1.0@sha256:0123abcd":       "v0.1.0",
		"bg-gitops@sha256:0123abcd":              "sha256:0123abcd",
		"":                                       "unknown",
	} {
		assert.Equal(t, want, imageVersion(image), image)
	}
}

// TestVersionIsStampedWhereTheBuildsSayIt: make build and the Dockerfile
// set the variable this package declares.
func TestVersionIsStampedWhereTheBuildsSayIt(t *testing.T) {
	const flag = "-X bggitops.dev/bg-gitops/internal/cli.Version="
	for _, f := range []string{"Makefile", "Dockerfile"} {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		require.NoError(t, err)
		assert.Contains(t, string(data), flag, f)
	}
}
