/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

func TestSnapshotObjectCarriesTheFormat(t *testing.T) {
	p := sampleParent(t)
	for format, want := range map[string]any{"": nil, "NATIVE": "NATIVE", "CANONICAL": "CANONICAL"} {
		u := snapshotObject(p, &bluegreen.SnapshotSpec{Name: "orders-sp-1", JobName: "orders-blue", FormatType: format})
		got, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "savepoint", "formatType")
		require.NoError(t, err)
		if want == nil {
			assert.False(t, found, "no format asked: the operator's default applies, got %v", got)
			continue
		}
		assert.Equal(t, want, got)
	}
}

// TestSnapshotFormatWithTheOperatorsCRD: the Flink operator's own
// FlinkStateSnapshot CRD keeps spec.savepoint.formatType as written, and
// rejects a value outside its enum (which is why bluegreen refuses one
// before asking).
func TestSnapshotFormatWithTheOperatorsCRD(t *testing.T) {
	bin, err := testenv.BinDir()
	require.NoError(t, err)
	te := &envtest.Environment{BinaryAssetsDirectory: bin, ControlPlaneStopTimeout: 20 * time.Second,
		CRDInstallOptions: envtest.CRDInstallOptions{Paths: []string{filepath.Clean(testenv.OperatorCRD("flinkstatesnapshots"))}}}
	cfg, err := te.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = te.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	require.NoError(t, err)
	ctx := context.Background()
	p := sampleParent(t)
	p.Namespace = "default"

	for name, format := range map[string]string{"orders-sp-default": "", "orders-sp-canonical": "CANONICAL", "orders-sp-native": "NATIVE"} {
		u := snapshotObject(p, &bluegreen.SnapshotSpec{Name: name, JobName: "orders-blue", FormatType: format})
		require.NoError(t, c.Create(ctx, u), name)
		got, _, _ := unstructured.NestedString(u.Object, "spec", "savepoint", "formatType")
		assert.Equal(t, format, got, "formatType as stored")
	}
	bad := snapshotObject(p, &bluegreen.SnapshotSpec{Name: "orders-sp-bad", JobName: "orders-blue", FormatType: "NATIV"})
	err = c.Create(ctx, bad, client.DryRunAll)
	assert.True(t, apierrors.IsInvalid(err), "want 422, got %v", err)
}
