/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// lateFBGD reschedules only every 10 minutes and stalls for a minute on
// missing CRDs, so within the test's 30 s only the CRDs' arrival and the
// children's watches can move it.
const lateFBGD = `
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: late
  annotations: {bggitops.dev/revision: "main@sha1:0000000000000000000000000000000000000001"}
spec:
  configuration:
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "10 min"
  template:
    spec:
      image: flink:1.20.0
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp"}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 1}
`

// TestFlinkCRDsInstalledLater: a controller started in a cluster without
// the Flink operator reports its FlinkBlueGreenDeployments Stalled; once
// the CRDs are installed (and the operator runs), the same process deploys
// them, and a child's status change wakes its parent.
func TestFlinkCRDsInstalledLater(t *testing.T) {
	e, err := testenv.Start(testenv.Options{WithoutFlinkCRDs: true})
	testenv.Require(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	ctx := context.Background()
	mgr, err := reconciletest.Start(e.Config, reconciletest.Options{Controllers: &reconcile.Options{
		CacheDir: t.TempDir(), Concurrent: 2, FlinkPoll: 200 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)

	ns := reconciletest.Namespace(t, e.Client)
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(lateFBGD), p))
	p.Namespace = ns
	require.NoError(t, e.Client.Create(ctx, p))
	key := types.NamespacedName{Namespace: ns, Name: "late"}
	waitFBGD(t, e, key, "Stalled FlinkCRDMissing", func(p *v1alpha1.FlinkBlueGreenDeployment) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.StalledCondition)
		return c != nil && c.Reason == "FlinkCRDMissing"
	})

	installFlinkCRDs(t, e)
	operator, err := reconciletest.Start(e.Config, reconciletest.Options{Simulator: flinksim.New(reconciletest.SimulatorOptions)})
	require.NoError(t, err)
	t.Cleanup(operator.Stop)

	// The child is created when the kinds appear (not at the stall's
	// minute), and it RUNNING wakes the parent (not its 10 minutes).
	waitFBGD(t, e, key, "ACTIVE_BLUE, job RUNNING, not Stalled", func(p *v1alpha1.FlinkBlueGreenDeployment) bool {
		return p.Status.BlueGreenState == v1alpha1.ActiveBlue && p.Status.JobStatus.State == v1alpha1.JobRunning &&
			!meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.StalledCondition)
	})
}

func waitFBGD(t *testing.T, e *testenv.Env, key types.NamespacedName, what string, cond func(*v1alpha1.FlinkBlueGreenDeployment) bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		p := &v1alpha1.FlinkBlueGreenDeployment{}
		return e.Client.Get(context.Background(), key, p) == nil && cond(p)
	}, waitFor, 100*time.Millisecond, "fbgd %s: %s", key, what)
}

// installFlinkCRDs creates the Flink test CRDs and waits until they are
// served.
func installFlinkCRDs(t *testing.T, e *testenv.Env) {
	t.Helper()
	crds, err := testenv.FlinkCRDs()
	require.NoError(t, err)
	for _, crd := range crds {
		require.NoError(t, e.Client.Create(context.Background(), crd))
		require.Eventually(t, func() bool {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if e.Client.Get(context.Background(), client.ObjectKeyFromObject(crd), got) != nil {
				return false
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true
				}
			}
			return false
		}, waitFor, 100*time.Millisecond)
	}
}
