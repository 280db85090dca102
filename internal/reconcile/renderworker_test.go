//go:build !race

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Not under the race detector: its runtime reserves shadow memory that a
// worker's data limit does not leave it, so the worker there measures the
// detector, not the build (make test runs this test).

package reconcile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/worker"
)

// hostile reads a tree of internal/worker/testdata/hostile.
func hostile(t *testing.T, name string) map[string]string {
	t.Helper()
	dir := filepath.Join("..", "worker", "testdata", "hostile", name)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

// TestHostileKustomizationFailsOnlyItsOwnGitRepository: a kustomization
// that makes kustomize recurse without end (an alias inside its own
// anchor, in an inline transformer's patch) ends the worker that builds
// it: its GitRepository fails with the limit named, while this process,
// the controller, lives on, and another namespace's commit is applied.
func TestHostileKustomizationFailsOnlyItsOwnGitRepository(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("render workers run on Linux only")
	}
	pid := os.Getpid()
	evil, fine := newNamespace(t), newNamespace(t)
	opts := reconcile.Options{AllowInsecureHTTP: true, RenderWorker: &worker.Pool{MaxMemory: 256 << 20},
		Render: render.Options{Limits: render.Limits{MaxFileReads: -1, MaxBytes: -1, MaxObjects: -1, MaxNodes: -1}}}
	startControllerWithOptions(t, evil, opts)
	startControllerWithOptions(t, fine, opts)

	bad := newGitFixture(t, evil)
	bad.push(hostile(t, "alias-cycle-in-inline-patch"))
	bad.create("s3cr3t-pass")
	good := newGitFixture(t, fine)
	rev := good.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	good.create("s3cr3t-pass")

	c := bad.waitCondition(v1alpha1.BuildFailedCondition, "worker process")
	assert.Contains(t, c.Message, "render limit exceeded")
	good.waitApplied(rev)
	assert.Equal(t, pid, os.Getpid())
}
