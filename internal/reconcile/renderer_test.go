/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/render"
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

// hostileCheckout is a security review's probe: a build that sets
// kustomize's schema (it runs alone) and applies 400 patches to 400
// ConfigMaps, which computed for minutes past its deadline holding every
// other build back.
func hostileCheckout(t *testing.T) string {
	var cms strings.Builder
	for i := range 400 {
		fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  k: v\n", i)
	}
	return renderCheckout(t, map[string]string{
		"app/kustomization.yaml": "resources: [cms.yaml]\nopenapi:\n  path: schema.json\npatches:\n" +
			strings.Repeat("- path: p.yaml\n  target: {kind: ConfigMap}\n", 400),
		"app/cms.yaml":    cms.String(),
		"app/p.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: any\ndata:\n  x: y\n",
		"app/schema.json": `{"definitions": {}}`,
	})
}

func renderedRepo(namespace, name string) *v1alpha1.GitRepository {
	return &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1alpha1.GitRepositorySpec{Path: "app"},
	}
}

// TestRendererRemembersTerminalFailures: a revision whose build failed for
// good is not built again at the next poll (it would fail the same way, and
// take a running place, alone for a build that sets the schema); a new
// commit is, and so is the revision once the GitRepository is forgotten.
func TestRendererRemembersTerminalFailures(t *testing.T) {
	ctx := context.Background()
	dir := hostileCheckout(t)
	r := &Renderer{}
	gr := renderedRepo("team-a", "app")
	_, err := r.Render(ctx, gr, dir, "main@sha1:1")
	var le *render.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, render.LimitNodes, le.Limit)
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
	_, err = r.Render(ctx, other, hostileCheckout(t), "main@sha1:1")
	require.Error(t, err)
	r.Forget(types.NamespacedName{Namespace: other.Namespace, Name: other.Name})
	objs, err = r.Render(ctx, other, dir, "main@sha1:1")
	require.NoError(t, err, "forgotten, the revision is built again")
	assert.Len(t, objs, 1)
}

// TestRendererForgetsFailuresNotOfTheRevision: a build that waited for
// other builds (here, for its own namespace's place, which an earlier build
// of the namespace holds) and one whose reconcile ended are built again;
// builds run one per namespace, so other namespaces' builds go on.
func TestRendererForgetsFailuresNotOfTheRevision(t *testing.T) {
	ctx := context.Background()
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
	slow := &Renderer{Options: render.Options{AllowRemoteBases: true, Limits: render.Limits{Timeout: -1}}}
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

	r := &Renderer{Options: render.Options{Limits: render.Limits{Timeout: 300 * time.Millisecond}}}
	gr := renderedRepo("team-a", "app")
	dir := simpleCheckout(t)
	_, err := r.Render(ctx, gr, dir, "main@sha1:1")
	var le *render.LimitError
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Waiting, "team-a's place is taken")
	assert.True(t, retryableRender(err))

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
	_, err = r.Render(canceled, other, dir, "main@sha1:1")
	require.Error(t, err)
	objs, err = r.Render(ctx, other, dir, "main@sha1:1")
	require.NoError(t, err, "a build its reconcile ended is built again")
	assert.Len(t, objs, 1)
}
