/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_due_test.go: a reconcile request left over from before an
// object's last reconcile does nothing; a change, or a restart, runs one.

package reconcile_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// TestALeftoverRequestOfAnUnchangedObjectWaitsForItsNextPoll: a reconcile
// request that reaches an object after the reconcile that made it current
// (the requeue of a reconcile that once found its namespace's workers
// busy) lists nothing and writes nothing, and answers with the time left
// to the next poll; a reconcile request (an annotation), or a controller
// that remembers nothing (a restart), polls.
func TestALeftoverRequestOfAnUnchangedObjectWaitsForItsNextPoll(t *testing.T) {
	f, rev := oneConfigMapRepository(t)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.get())}
	r := directReconciler(t, env.Client)
	res, err := r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	require.Equal(t, rev, f.get().Status.LastAppliedRevision)
	lists, rv := f.srv.Listings(), f.get().ResourceVersion

	again, err := r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, lists, f.srv.Listings(), "a leftover request lists nothing")
	assert.Equal(t, rv, f.get().ResourceVersion, "and writes nothing")
	assert.InDelta(t, res.RequeueAfter.Seconds(), again.RequeueAfter.Seconds(), 5, "it waits for the next poll")
	assert.Greater(t, again.RequeueAfter, 50*time.Minute)

	f.requestReconcile()
	_, err = r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, lists+1, f.srv.Listings(), "a reconcile request polls")

	_, err = directReconciler(t, env.Client).Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, lists+2, f.srv.Listings(), "a controller that starts polls")
}

// oneConfigMapRepository is a GitRepository, not yet reconciled, whose
// repository renders one ConfigMap at the revision returned.
func oneConfigMapRepository(t *testing.T) (*gitFixture, string) {
	f := newGitFixture(t, newNamespace(t))
	rev := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"),
		"a.yaml":             fmt.Sprintf(configMap, "a", "1"),
	})
	f.create("s3cr3t-pass")
	return f, rev
}

// TestAChangeMadeDuringAReconcileIsNotTakenAsHandled: a reconcile request
// (a push's webhook) lands while a reconcile runs, before any one of its
// status writes, which is then put onto the version that carries it (a
// rebase after the conflict): the request the change queued still runs,
// and applies the pushed commit, instead of waiting for the next poll.
func TestAChangeMadeDuringAReconcileIsNotTakenAsHandled(t *testing.T) {
	forge := startGitea(t)
	for n := 1; ; n++ {
		if !changeBeforeStatusWrite(t, forge, n) {
			require.Greater(t, n, 2, "calibration: a reconcile that posts statuses writes its status more than once")
			return
		}
	}
}

// changeBeforeStatusWrite runs the case before the n-th status write of
// the reconcile; false when it made fewer writes.
func changeBeforeStatusWrite(t *testing.T, forge *gitea.Server, n int) bool {
	ns := newNamespace(t)
	r := newForgeRepo(t, forge, ns)
	a := r.push(settingsFiles("a"))
	r.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
			Repository: forge.Repository(r.name), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
	})
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(r.get())}
	var b string
	c := &conflictAt{Client: env.Client, n: n, before: func() {
		b = r.push(settingsFiles("b"))
		gr := r.get()
		patch := client.MergeFrom(gr.DeepCopy())
		gr.Annotations = map[string]string{v1alpha1.ReconcileRequestedAtAnnotation: "now"}
		require.NoError(t, env.Client.Patch(t.Context(), gr, patch))
	}}
	rec := directReconciler(t, c)
	_, err := rec.Reconcile(t.Context(), req)
	require.NoError(t, err)
	if b == "" {
		return false
	}
	require.Equal(t, a, r.get().Status.LastAppliedRevision, "status write %d: the first reconcile applied what it fetched", n)

	_, err = rec.Reconcile(t.Context(), req) // the request the annotation queued
	require.NoError(t, err)
	assert.Equal(t, b, r.get().Status.LastAppliedRevision, "status write %d: the pushed commit is applied, not left for the next poll", n)
	return true
}

// TestALeftoverRequestReadFromACacheBehindTheReconcileWaitsForItsNextPoll:
// the requeue of a reconcile that found its namespace's workers busy, and
// was woken and run before it fell due, can come right after that run,
// while the controller's cache still shows the object as the run read it:
// it lists nothing and writes nothing either. A version nobody reconciled
// still polls.
func TestALeftoverRequestReadFromACacheBehindTheReconcileWaitsForItsNextPoll(t *testing.T) {
	f, rev := oneConfigMapRepository(t)
	before := f.get() // what a cache that has not seen the status write holds
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(before)}
	r := directReconciler(t, env.Client)
	res, err := r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	written := f.get()
	require.Equal(t, rev, written.Status.LastAppliedRevision)
	require.NotEqual(t, before.ResourceVersion, written.ResourceVersion, "calibration: the reconcile wrote its status")
	lists := f.srv.Listings()

	r.Client = staleClient{Client: env.Client, old: before}
	again, err := r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, lists, f.srv.Listings(), "a leftover request read from a cache behind lists nothing")
	assert.Equal(t, written.ResourceVersion, f.get().ResourceVersion, "and writes nothing")
	assert.InDelta(t, res.RequeueAfter.Seconds(), again.RequeueAfter.Seconds(), 5, "it waits for the next poll")

	other := before.DeepCopy()
	other.ResourceVersion = "1" // a version this controller never reconciled
	r.Client = staleClient{Client: env.Client, old: other}
	_, err = r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, lists+1, f.srv.Listings(), "a version it did not reconcile polls")
}
