/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/flinksim"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testenv"
)

// The API server, the controllers and the Flink simulator are started by
// the first test that needs them and stopped after all tests.
var (
	clusterOnce sync.Once
	clusterEnv  *testenv.Env
	clusterErr  error
	sim         *flinksim.Simulator
	stopManager context.CancelFunc
	nsN         atomic.Int32
)

const waitFor = 45 * time.Second

// cluster returns the running test cluster with the controllers and the
// simulator running for all namespaces.
func cluster(t *testing.T) *testenv.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd")
	}
	clusterOnce.Do(func() { clusterEnv, clusterErr = startCluster() })
	require.NoError(t, clusterErr)
	return clusterEnv
}

func startCluster() (*testenv.Env, error) {
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err == nil {
		sim = flinksim.New(flinksim.Options{StartDelay: 400 * time.Millisecond, SavepointDelay: 300 * time.Millisecond})
		err = sim.SetupWithManager(mgr)
	}
	if err == nil {
		err = reconcile.Setup(mgr, reconcile.Options{ReceiverAddress: "0", SkipNameValidation: true, Concurrent: 4})
	}
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	stopManager = func() { cancel(); <-done }
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
	name := fmt.Sprintf("t%d-%s", nsN.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	return name
}

func getFBGD(t *testing.T, env *testenv.Env, ns, name string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, p))
	return p
}

func flinkChild(env *testenv.Env, ns, name string) (*unstructured.Unstructured, bool) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(flinksim.FlinkDeploymentGVK)
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
