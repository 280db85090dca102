/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

func startControllerWithOptions(t *testing.T, ns string, o reconcile.Options) {
	t.Helper()
	o.CacheDir, o.Concurrent = t.TempDir(), 2
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: ns, Controllers: &o})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)
}

// TestInsecureGitURLStalls: without --allow-insecure-http, an http:// URL
// with a Secret is refused before anything is sent to the server.
func TestInsecureGitURLStalls(t *testing.T) {
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{})
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")
	f.waitCondition(v1alpha1.StalledCondition, "--allow-insecure-http")
	c := apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.FetchFailedCondition)
	require.NotNil(t, c)
	assert.Equal(t, source.ReasonURLNotAllowed, c.Reason)
	assert.NotContains(t, c.Message, "s3cr3t-pass")
	assert.Zero(t, f.srv.Listings(), "the credentials were never sent")
	assert.False(t, configMapExists(ns, "a"))
}

// TestGitLimitStalls: a repository over a limit is Stalled with the limit
// named, and nothing of it is applied.
func TestGitLimitStalls(t *testing.T) {
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true, GitLimits: source.Limits{MaxFileBytes: 64 << 10}})
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1"),
		"big.bin": strings.Repeat("0", 100<<10)})
	f.create("s3cr3t-pass")
	f.waitCondition(v1alpha1.StalledCondition, "file size limit (--git-max-file-size=64Ki)")
	c := apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.FetchFailedCondition)
	require.NotNil(t, c)
	assert.Equal(t, source.ReasonLimitExceeded, c.Reason)
	assert.False(t, configMapExists(ns, "a"))
}

// TestRenderLimitKeepsLastGoodRevision: a commit whose build exceeds a
// render limit fails with the limit named, leaves what the previous
// revision applied untouched, and the next good commit applies.
func TestRenderLimitKeepsLastGoodRevision(t *testing.T) {
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true, Render: render.Options{Limits: render.Limits{MaxObjects: 3}}})
	f := newGitFixture(t, ns)
	good := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")
	f.waitApplied(good)

	files := map[string]string{}
	var names []string
	for i := range 5 {
		name := fmt.Sprintf("m%d.yaml", i)
		files[name] = fmt.Sprintf(configMap, fmt.Sprintf("m%d", i), "x")
		names = append(names, name)
	}
	files["a.yaml"] = fmt.Sprintf(configMap, "a", "2")
	files["kustomization.yaml"] = fmt.Sprintf(kustomization, "a.yaml, "+strings.Join(names, ", "))
	f.push(files)
	f.requestReconcile()
	c := f.waitCondition(v1alpha1.BuildFailedCondition, "more than 3 objects")
	assert.Contains(t, c.Message, "render limit exceeded")
	gr := f.get()
	assert.Equal(t, good, gr.Status.LastAppliedRevision, "the failed build applied nothing")
	assert.False(t, configMapExists(ns, "m0"))
	assert.Equal(t, "1", configMapValue(t, ns, "a"), "the running revision's objects are untouched")

	fixed := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "3")})
	f.requestReconcile()
	f.waitApplied(fixed)
	assert.Nil(t, apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.BuildFailedCondition))
	assert.Equal(t, "3", configMapValue(t, ns, "a"))
}

func configMapValue(t *testing.T, ns, name string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cm))
	return cm.Data["key"]
}
