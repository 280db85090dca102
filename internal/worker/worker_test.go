/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/render"
)

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: "1"
`

func TestWorkerBuildsWhatAnInProcessBuildDoes(t *testing.T) {
	root := tree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- cm.yaml\n",
		"app/cm.yaml":            configMap,
	})
	o := render.Options{Revision: "main@sha1:abc", Source: "ns/repo"}
	want, err := render.Build(root, "app", o)
	require.NoError(t, err)
	got, err := (&Pool{}).Build(t.Context(), root, "app", o)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	assert.Equal(t, want[0].Object, got[0].Object)
}

func TestWorkerBuildErrorKeepsItsKind(t *testing.T) {
	root := tree(t, map[string]string{"app/kustomization.yaml": "resources:\n- missing.yaml\n"})
	_, inProcess := render.Build(root, "app", render.Options{})
	_, err := (&Pool{}).Build(t.Context(), root, "app", render.Options{})
	require.Error(t, err)
	assert.Equal(t, inProcess.Error(), err.Error())
	assert.ErrorIs(t, err, render.ErrNotFound)
}

// A worker that cannot start is no fault of the repository: the error
// says so (ErrWorker), and the Renderer tries again.
func TestWorkerThatCannotStartIsAWorkerFailure(t *testing.T) {
	_, err := (&Pool{Binary: filepath.Join(t.TempDir(), "missing")}).Build(t.Context(), "testdata", "fine", render.Options{})
	require.ErrorIs(t, err, ErrWorker)
}
