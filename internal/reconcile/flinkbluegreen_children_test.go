/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

func sampleParent(t *testing.T) *v1alpha1.FlinkBlueGreenDeployment {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(`
metadata: {name: orders, namespace: default, uid: 0b7e1f0e-0000-4000-8000-000000000001, annotations: {bggitops.dev/revision: "main@sha1:abc"}}
spec:
  template:
    spec:
      image: flink:1.20
      flinkVersion: v1_20
      mode: native
      serviceAccount: flink
      flinkConfiguration: {parallelism.default: "2", state.savepoints.dir: "file:///sp"}
      jobManager: {resource: {memory: 2048m, cpu: 1}}
      taskManager: {resource: {memory: 2048m, cpu: 1}}
      job: {jarURI: "local:///job.jar", upgradeMode: savepoint, parallelism: 2, state: running, allowNonRestoredState: false, savepointRedeployNonce: 1}
`), p))
	return p
}

// TestBuiltObjectsAgainstTheRealFlinkCRDs proves that a child
// FlinkDeployment and a FlinkStateSnapshot built by the controller validate
// against the Flink operator's real CRDs (server-side dry-run), and that a
// FlinkBlueGreenDeployment in a cluster without those CRDs is Stalled with a
// message that says so.
func TestBuiltObjectsAgainstTheRealFlinkCRDs(t *testing.T) {
	env, err := testenv.Start(testenv.Options{WithoutFlinkCRDs: true})
	require.NoError(t, err)
	defer env.Stop()
	ctx := context.Background()
	p := sampleParent(t)
	p.UID = ""
	p.Namespace = "default"
	require.NoError(t, env.Client.Create(ctx, p))

	t.Run("missing Flink CRDs stall the deployment", func(t *testing.T) {
		r := &FlinkBlueGreenReconciler{Client: env.Client, Recorder: events.NewFakeRecorder(10)}
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "orders"}})
		require.NoError(t, err)
		got := &v1alpha1.FlinkBlueGreenDeployment{}
		require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(p), got))
		c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.StalledCondition)
		require.NotNil(t, c)
		assert.Contains(t, c.Message, "install the Flink Kubernetes Operator")
	})

	installRealCRDs(t, env)
	cs := &bluegreen.ChildSpec{Name: "orders-green", Color: bluegreen.Green, Spec: p.Spec.Template.Spec, Revision: "main@sha1:abc"}
	cs.Spec.Job.InitialSavepointPath = "/sp/savepoint-1"
	child, err := childObject(p, cs)
	require.NoError(t, err)
	require.NoError(t, env.Client.Create(ctx, child.DeepCopy(), client.DryRunAll), "child FlinkDeployment against the real CRD")
	require.NoError(t, objects.Apply(ctx, env.Client, child, client.DryRunAll))
	require.NoError(t, env.Client.Create(ctx, snapshotObject(p, &bluegreen.SnapshotSpec{Name: "orders-sp-1", JobName: "orders-blue", Revision: "main@sha1:abc"}), client.DryRunAll),
		"FlinkStateSnapshot against the real CRD")
}

func installRealCRDs(t *testing.T, env *testenv.Env) {
	t.Helper()
	ctx := context.Background()
	for _, kind := range []string{"flinkdeployments", "flinkstatesnapshots"} {
		data, err := os.ReadFile(testenv.OperatorCRD(kind))
		require.NoError(t, err)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.Unmarshal(data, crd))
		require.NoError(t, env.Client.Create(ctx, crd))
		require.Eventually(t, func() bool {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if env.Client.Get(ctx, client.ObjectKeyFromObject(crd), got) != nil {
				return false
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true
				}
			}
			return false
		}, 20*time.Second, 100*time.Millisecond)
	}
	// A fresh client sees the new kinds (its RESTMapper was built before).
	c, err := client.New(env.Config, client.Options{Scheme: testenv.Scheme()})
	require.NoError(t, err)
	env.Client = c
}
