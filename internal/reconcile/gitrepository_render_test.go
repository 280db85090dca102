/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/worker"
)

// renderCheckout writes files (path → content) into a new checkout.
func renderCheckout(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	return root
}

const renderedConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n"

func simpleCheckout(t *testing.T) string {
	return renderCheckout(t, map[string]string{
		"app/kustomization.yaml": "resources: [cm.yaml]\n",
		"app/cm.yaml":            renderedConfigMap,
	})
}

// brokenCheckout fails to build for good: a resource that is not there.
func brokenCheckout(t *testing.T) string {
	return renderCheckout(t, map[string]string{"app/kustomization.yaml": "resources: [missing.yaml]\n"})
}

func renderedRepo(namespace, name string) *v1alpha1.GitRepository {
	return &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1alpha1.GitRepositorySpec{Path: "app"},
	}
}

// TestRendererRemembersTerminalFailures: a revision whose build failed for
// good is not built again at the next poll (it would fail the same way, and
// take a running place); a new commit is, and so is the revision once the
// GitRepository is forgotten.
func TestRendererRemembersTerminalFailures(t *testing.T) {
	ctx := context.Background()
	dir := brokenCheckout(t)
	r := &Renderer{}
	gr := renderedRepo("team-a", "app")
	_, err := r.Render(ctx, gr, dir, "main@sha1:1")
	require.ErrorIs(t, err, render.ErrNotFound)
	require.False(t, retryableRender(err))

	// The checkout now renders, but the revision is the same: no build.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app", "kustomization.yaml"), []byte("resources: [cm.yaml]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app", "cm.yaml"), []byte(renderedConfigMap), 0o644))
	objs, again := r.Render(ctx, gr, dir, "main@sha1:1")
	assert.Nil(t, objs)
	assert.Same(t, err, again, "the remembered failure")

	objs, err = r.Render(ctx, gr, dir, "main@sha1:2")
	require.NoError(t, err, "a new commit is built")
	assert.Len(t, objs, 1)

	other := renderedRepo("team-a", "other")
	_, err = r.Render(ctx, other, brokenCheckout(t), "main@sha1:9")
	require.Error(t, err)
	r.Forget(types.NamespacedName{Namespace: other.Namespace, Name: other.Name})
	objs, err = r.Render(ctx, other, dir, "main@sha1:9")
	require.NoError(t, err, "forgotten, the revision is built again")
	assert.Len(t, objs, 1)
}

// TestRendererForgetsFailuresNotOfTheRevision: a build that waited for
// other builds (here, for its own namespace's place, which an earlier build
// of the namespace holds) and one whose reconcile ended are built again;
// builds run one per namespace, so other namespaces' builds go on.
func TestRendererForgetsFailuresNotOfTheRevision(t *testing.T) {
	if !worker.Supported() {
		t.Skip("render workers run on Linux only")
	}
	ctx := context.Background()
	pool := &worker.Pool{Slots: 2}
	requested := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		requested <- struct{}{}
		<-release
	}))
	t.Cleanup(srv.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	hanging := renderCheckout(t, map[string]string{"app/kustomization.yaml": "resources: [" + srv.URL + "/hang.yaml]\n"})
	slow := &Renderer{Worker: pool, Options: render.Options{AllowRemoteBases: true, Limits: render.Limits{Timeout: -1}}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = slow.Render(ctx, renderedRepo("team-a", "remote"), hanging, "main@sha1:1")
	}()
	select {
	case <-requested:
	case <-time.After(time.Minute):
		t.Fatal("the remote build did not start")
	}

	r := &Renderer{Worker: pool, Options: render.Options{Limits: render.Limits{Timeout: 2 * time.Second}}}
	gr := renderedRepo("team-a", "app")
	dir := simpleCheckout(t)
	_, err := r.Render(ctx, gr, dir, "main@sha1:1")
	var le *render.LimitError
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Waiting, "team-a's place is taken")
	assert.True(t, retryableRender(err))

	// The short limit made team-a's wait end soon; the builds that follow
	// get room for a worker's start on a busy machine (under -race).
	r.Options.Limits.Timeout = time.Minute
	objs, err := r.Render(ctx, renderedRepo("team-b", "app"), dir, "main@sha1:1")
	require.NoError(t, err, "team-b's build runs")
	assert.Len(t, objs, 1)

	close(release)
	released = true
	<-done
	objs, err = r.Render(ctx, gr, dir, "main@sha1:1")
	require.NoError(t, err, "the build that waited is built again")
	assert.Len(t, objs, 1)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	other := renderedRepo("team-c", "app")
	_, err = r.Render(canceled, other, dir, "main@sha1:3")
	require.Error(t, err)
	objs, err = r.Render(ctx, other, dir, "main@sha1:3")
	require.NoError(t, err, "a build its reconcile ended is built again")
	assert.Len(t, objs, 1)
}

// TestRendererSharesTheBuildOfACommit: GitRepositories that read the same
// commit and path share one kustomize build; each gets its own revision,
// source and target namespace.
func TestRendererSharesTheBuildOfACommit(t *testing.T) {
	ctx := context.Background()
	dir := simpleCheckout(t)
	r := &Renderer{}
	a, b := renderedRepo("team-a", "app"), renderedRepo("team-b", "app")
	b.Spec.TargetNamespace = "apps"
	objsA, err := r.Render(ctx, a, dir, "main@sha1:1")
	require.NoError(t, err)
	objsB, err := r.Render(ctx, b, dir, "v1@sha1:1")
	require.NoError(t, err)
	assert.EqualValues(t, 1, r.Builds(), "one build for both")
	require.Len(t, objsA, 1)
	require.Len(t, objsB, 1)
	assert.Equal(t, "main@sha1:1", objsA[0].GetAnnotations()[v1alpha1.RevisionAnnotation])
	assert.Equal(t, "team-a/app", objsA[0].GetAnnotations()[v1alpha1.SourceAnnotation])
	assert.Empty(t, objsA[0].GetNamespace())
	assert.Equal(t, "v1@sha1:1", objsB[0].GetAnnotations()[v1alpha1.RevisionAnnotation])
	assert.Equal(t, "team-b/app", objsB[0].GetAnnotations()[v1alpha1.SourceAnnotation])
	assert.Equal(t, "apps", objsB[0].GetNamespace())

	c := renderedRepo("team-c", "app")
	c.Spec.Path = "other"
	_, err = r.Render(ctx, c, dir, "main@sha1:1")
	require.Error(t, err, "another path is another build")
	_, err = r.Render(ctx, a, dir, "main@sha1:2")
	require.NoError(t, err)
	assert.EqualValues(t, 3, r.Builds(), "another path, another commit: builds of their own")
}

// TestRequestedRebuildDoesNotShareAnotherRepositorysBuild: a requested
// reconcile runs kustomize afresh even when another GitRepository built
// the same commit and path.
func TestRequestedRebuildDoesNotShareAnotherRepositorysBuild(t *testing.T) {
	ctx := context.Background()
	dir := simpleCheckout(t)
	r := &Renderer{}
	a, b := renderedRepo("team-a", "app"), renderedRepo("team-b", "app")
	_, err := r.Render(ctx, a, dir, "main@sha1:1")
	require.NoError(t, err)
	r.Rebuild(b, "main@sha1:1")
	_, err = r.Render(ctx, b, dir, "main@sha1:1")
	require.NoError(t, err)
	assert.EqualValues(t, 2, r.Builds(), "built afresh")
}
