/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// operatorCRD is the Flink Kubernetes Operator's own FlinkDeployment CRD
// (internal/testing/testenv/operatorcrds), where a string cpu is a type error.
var operatorCRD = testenv.OperatorCRD("flinkdeployments")

const checkedParent = `
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata: {name: job, namespace: %NS%}
spec:
  template:
    spec:
      image: flink:1.20.0
      flinkVersion: v1_20
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: %CPU%}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
`

func parent(t *testing.T, ns, cpu string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	text := strings.NewReplacer("%NS%", ns, "%CPU%", cpu).Replace(checkedParent)
	require.NoError(t, yaml.Unmarshal([]byte(text), &u.Object))
	return u
}

// TestCheckChildWithTheOperatorsCRD runs the check against a control plane
// of its own that serves the Flink operator's FlinkDeployment CRD, where a
// string cpu is a schema error.
func TestCheckChildWithTheOperatorsCRD(t *testing.T) {
	bin, err := testenv.BinDir()
	require.NoError(t, err)
	te := &envtest.Environment{BinaryAssetsDirectory: bin, ControlPlaneStopTimeout: 20 * time.Second,
		CRDInstallOptions: envtest.CRDInstallOptions{Paths: []string{filepath.Clean(operatorCRD)}}}
	cfg, err := te.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = te.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	require.NoError(t, err)
	ctx := context.Background()

	assert.NoError(t, checkChild(ctx, c, parent(t, "default", "1")), "a number is accepted")
	assert.NoError(t, checkChild(ctx, c, parent(t, "not-yet-created", `"1"`)), "no namespace, no check")

	err = checkChild(ctx, c, parent(t, "default", `"1"`))
	var rej *apply.RejectedError
	require.True(t, errors.As(err, &rej), "want a rejection, got %v", err)
	t.Logf("rejection: %v", err)
	assert.Contains(t, err.Error(), "its FlinkDeployment child would be rejected: spec.taskManager.resource.cpu")
	assert.NotContains(t, err.Error(), "job-preflight-", "the generated name would change the message on every sync")
}
