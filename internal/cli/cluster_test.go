/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The control plane the cluster tests share (a real kube-apiserver and etcd, the
// controllers and the Flink simulator running), and helpers to read and wait on it.

package cli

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// The API server, the controllers and the Flink simulator are started by
// the first test that needs them and stopped after all tests.
var (
	clusterOnce sync.Once
	clusterEnv  *testenv.Env
	clusterErr  error
	sim         *flinksim.Simulator
	stopManager func()
)

const waitFor = 45 * time.Second

// cluster returns the running test cluster with the controllers and the
// simulator running for all namespaces.
func cluster(t *testing.T) *testenv.Env {
	t.Helper()
	clusterOnce.Do(func() { clusterEnv, clusterErr = startCluster() })
	require.NoError(t, clusterErr)
	return clusterEnv
}

func startCluster() (*testenv.Env, error) {
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		return nil, err
	}
	sim = flinksim.New(reconciletest.SimulatorOptions)
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Simulator: sim,
		// Tests serve repositories from file:// URLs.
		Controllers: &reconcile.Options{ReceiverAddress: "0", Concurrent: 4, AllowFileURLs: true}})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	stopManager = mgr.Stop
	return env, nil
}

func stopCluster() {
	if stopManager != nil {
		stopManager()
	}
	if clusterEnv != nil {
		_ = clusterEnv.Stop()
	}
}

// newNamespace creates a namespace of the test's own.
func newNamespace(t *testing.T, env *testenv.Env) string {
	t.Helper()
	return reconciletest.Namespace(t, env.Client)
}

func getFBGD(t *testing.T, env *testenv.Env, ns, name string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, p))
	return p
}

func flinkChild(env *testenv.Env, ns, name string) (*unstructured.Unstructured, bool) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u)
	return u, err == nil
}

func nestedString(u *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func fbgdIn(env *testenv.Env, t *testing.T, ns, name string, bg v1alpha1.BlueGreenState, job v1alpha1.JobState) func() bool {
	return func() bool {
		p := getFBGD(t, env, ns, name)
		return p.Status.BlueGreenState == bg && p.Status.JobStatus.State == job
	}
}
