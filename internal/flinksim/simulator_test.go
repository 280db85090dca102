/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package flinksim_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/flinksim"
	"bggitops.dev/bg-gitops/internal/testenv"
)

var (
	env *testenv.Env
	sim *flinksim.Simulator
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if env, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sim = flinksim.New(flinksim.Options{StartDelay: 300 * time.Millisecond, SavepointDelay: 300 * time.Millisecond})
	if err := sim.SetupWithManager(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()
	return m.Run()
}

func create(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(manifest), &u.Object))
	require.NoError(t, env.Client.Create(context.Background(), u))
	return u
}

func field(t *testing.T, u *unstructured.Unstructured, path ...string) func() string {
	return func() string {
		got := u.DeepCopy()
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, got); err != nil {
			return "error: " + err.Error()
		}
		v, _, _ := unstructured.NestedString(got.Object, path...)
		return v
	}
}

func eventually(t *testing.T, get func() string, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return get() == want }, 15*time.Second, 50*time.Millisecond, "want %s, last %s", want, get())
}

const job = `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: %s, namespace: default}
spec:
  image: flink:1.20
  flinkConfiguration: {state.savepoints.dir: "file:///sp", %s}
  job: {jarURI: "local:///j.jar", upgradeMode: savepoint, initialSavepointPath: "%s"}
`

func TestJobBecomesStableAndSavepointCarriesOffset(t *testing.T) {
	fd := create(t, fmt.Sprintf(job, "healthy", `a: b`, ""))
	eventually(t, field(t, fd, "status", "lifecycleState"), "STABLE")
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	jobID := field(t, fd, "status", "jobStatus", "jobId")()
	require.Len(t, jobID, 32)

	time.Sleep(200 * time.Millisecond)
	snap := create(t, `
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: healthy-sp, namespace: default}
spec: {jobReference: {kind: FlinkDeployment, name: healthy}, savepoint: {}}`)
	eventually(t, field(t, snap, "status", "state"), "COMPLETED")
	path := field(t, snap, "status", "path")()
	assert.Contains(t, path, "file:/sp/savepoint-")
	sp, ok := sim.Lineage().Savepoint(path)
	require.True(t, ok)
	assert.Equal(t, jobID, sp.JobID)
	assert.Positive(t, sp.Offset)

	next := create(t, fmt.Sprintf(job, "restored", `a: b`, path[len("file:"):]))
	eventually(t, field(t, next, "status", "jobStatus", "state"), "RUNNING")
	restored, ok := sim.Lineage().Job(field(t, next, "status", "jobStatus", "jobId")())
	require.True(t, ok)
	assert.Equal(t, sp.Offset, restored.StartOffset, "the new job carries the savepoint's offset")
}

func TestFaults(t *testing.T) {
	never := create(t, fmt.Sprintf(job, "never", `"bggitops.dev/simulate-never-ready": "true"`, ""))
	failing := create(t, fmt.Sprintf(job, "failing", `"bggitops.dev/simulate-fail-after": "500ms"`, ""))
	spFail := create(t, fmt.Sprintf(job, "spfail", `"bggitops.dev/simulate-savepoint": "fail"`, ""))
	eventually(t, field(t, failing, "status", "jobStatus", "state"), "FAILED")
	eventually(t, field(t, spFail, "status", "jobStatus", "state"), "RUNNING")
	assert.Equal(t, "RECONCILING", field(t, never, "status", "jobStatus", "state")())
	assert.Equal(t, "DEPLOYED", field(t, never, "status", "lifecycleState")())

	snap := create(t, `
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: spfail-sp, namespace: default}
spec: {jobReference: {kind: FlinkDeployment, name: spfail}, savepoint: {}}`)
	eventually(t, field(t, snap, "status", "state"), "FAILED")
	assert.Equal(t, "simulated savepoint failure", field(t, snap, "status", "error")())
}

func TestSuspendAndDeletionFinalizer(t *testing.T) {
	ctx := context.Background()
	fd := create(t, fmt.Sprintf(job, "suspendme", `a: b`, ""))
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "suspendme"}, fd))
	require.NoError(t, unstructured.SetNestedField(fd.Object, "suspended", "spec", "job", "state"))
	require.NoError(t, env.Client.Update(ctx, fd))
	eventually(t, field(t, fd, "status", "lifecycleState"), "SUSPENDED")
	assert.NotEmpty(t, field(t, fd, "status", "jobStatus", "upgradeSavepointPath")(), "a stateful suspend takes a savepoint")

	require.NoError(t, env.Client.Delete(ctx, fd))
	eventually(t, field(t, fd, "metadata", "name"), "error: flinkdeployments.flink.apache.org \"suspendme\" not found")
}
