/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// staleClient is a cache that has not yet seen the latest writes: Get of
// the GitRepository returns an older copy.
type staleClient struct {
	client.Client
	old *v1alpha1.GitRepository
}

func (c staleClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if gr, ok := obj.(*v1alpha1.GitRepository); ok && key == client.ObjectKeyFromObject(c.old) {
		c.old.DeepCopyInto(gr)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// directReconciler drives the GitRepository reconciler by hand, reading
// through c.
func directReconciler(t *testing.T, c client.Client) *reconcile.GitRepositoryReconciler {
	t.Helper()
	r, err := reconcile.NewDirectGitRepositoryReconciler(env.Config, testenv.Scheme(), c, env.Client, t.TempDir())
	require.NoError(t, err)
	return r
}

// TestStaleCacheReadPostsNoCommitStatusAgain: the GitRepository is read
// from the cache. A reconcile that starts before the cache has seen the
// previous reconcile's status write finds no record of the statuses that
// reconcile posted: it must post nothing and write nothing, and run
// again. (Reading from the API server instead was the first remedy; the
// cache read keeps an idle reconcile to one request per managed object.)
func TestStaleCacheReadPostsNoCommitStatusAgain(t *testing.T) {
	ns := newNamespace(t)
	forge := startGitea(t)
	r := newForgeRepo(t, forge, ns)
	rev := r.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
	})
	r.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
			Repository: forge.Repository(r.name), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
	})
	before := r.get() // what a cache that missed the next write holds
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(before)}
	sync := status.SyncContext(ns, "flink")

	res, err := directReconciler(t, env.Client).Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, time.Hour, res.RequeueAfter.Round(time.Hour), "the next poll")
	assert.Equal(t, []string{"pending", "success"}, statesOf(forgeStatuses(t, forge, r.name, rev, sync)))
	written := r.get()
	require.Equal(t, rev, written.Status.LastAppliedRevision)

	res, err = directReconciler(t, staleClient{Client: env.Client, old: before}).Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, reconcile.StaleRetry, res.RequeueAfter, "a stale read runs again soon")
	assert.Equal(t, []string{"pending", "success"}, statesOf(forgeStatuses(t, forge, r.name, rev, sync)), "nothing posted twice")
	assert.Equal(t, written.ResourceVersion, r.get().ResourceVersion, "nothing written from the stale read")

	res, err = directReconciler(t, env.Client).Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, time.Hour, res.RequeueAfter.Round(time.Hour))
	assert.Equal(t, []string{"pending", "success"}, statesOf(forgeStatuses(t, forge, r.name, rev, sync)))
}

// conflictAt runs before ahead of the n-th status write, which then meets
// a newer resourceVersion (before changes the object).
type conflictAt struct {
	client.Client
	n, writes int
	before    func()
}

func (c *conflictAt) Status() client.SubResourceWriter {
	return &conflictAtWriter{SubResourceWriter: c.Client.Status(), c: c}
}

type conflictAtWriter struct {
	client.SubResourceWriter
	c *conflictAt
}

func (w *conflictAtWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if w.c.writes++; w.c.writes == w.c.n {
		w.c.before()
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// settingsFiles is a kustomization of one ConfigMap whose value is v.
func settingsFiles(v string) map[string]string {
	return map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml"),
		"settings.yaml": fmt.Sprintf(configMap, "settings", v)}
}

// TestStatusWriteAfterAPostSurvivesAConflict is what make chaos (seed
// 135096583) found: the sync pending of commit A reached the forge, the
// status write that records it met a conflict (the receiver's reconcile
// request annotation for commit B, pushed meanwhile), the record was
// dropped, the next reconcile went on with B, and A stayed pending for
// ever. A conflict that only metadata or spec caused now writes the status
// onto the latest version.
func TestStatusWriteAfterAPostSurvivesAConflict(t *testing.T) {
	ns := newNamespace(t)
	forge := startGitea(t)
	r := newForgeRepo(t, forge, ns)
	a := r.push(settingsFiles("a"))
	r.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
			Repository: forge.Repository(r.name), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
	})
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(r.get())}
	sync := status.SyncContext(ns, "flink")
	var b string
	c := &conflictAt{Client: env.Client, n: 1, before: func() {
		b = r.push(settingsFiles("b"))
		gr := r.get()
		patch := client.MergeFrom(gr.DeepCopy())
		gr.Annotations = map[string]string{"bggitops.dev/reconcile-requested-at": "now"}
		require.NoError(t, env.Client.Patch(t.Context(), gr, patch))
	}}
	_, err := directReconciler(t, c).Reconcile(t.Context(), req)
	require.NoError(t, err)
	for range 3 {
		_, err = directReconciler(t, env.Client).Reconcile(t.Context(), req)
		require.NoError(t, err)
	}
	require.Equal(t, b, r.get().Status.LastAppliedRevision)
	assert.Equal(t, "success", last(statesOf(forgeStatuses(t, forge, r.name, b, sync))))
	assert.NotEqual(t, "pending", last(statesOf(forgeStatuses(t, forge, r.name, a, sync))), "A got its verdict")
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
