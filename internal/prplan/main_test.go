/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// main_test.go: the control plane prplan's tests share (a real kube-apiserver
// and etcd, the controllers and the Flink simulator running) and helpers to
// deploy a job and plan a head against it.

package prplan_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

var env *testenv.Env

const waitFor = 45 * time.Second

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	var err error
	if env, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	sim := flinksim.New(reconciletest.SimulatorOptions)
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Simulator: sim,
		Controllers: &reconcile.Options{ReceiverAddress: "0", Concurrent: 4}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer mgr.Stop()
	return m.Run()
}

const fbgdTemplate = `
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: %s
  annotations: {bggitops.dev/revision: "main@sha1:%040d"}
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: "7 min"
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "200ms"
  template:
    spec:
      image: %s
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp"}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: %s, parallelism: 2}
`

// fbgd is a FlinkBlueGreenDeployment of revision rev.
func fbgd(t *testing.T, ns, name string, rev int, image, upgradeMode string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(fmt.Sprintf(fbgdTemplate, name, rev, image, upgradeMode)), p))
	p.Namespace = ns
	return p
}

// deploy creates p and waits until its first job runs blue.
func deploy(t *testing.T, p *v1alpha1.FlinkBlueGreenDeployment) {
	t.Helper()
	require.NoError(t, env.Client.Create(context.Background(), p.DeepCopy()))
	waitState(t, p.Namespace, p.Name, v1alpha1.ActiveBlue)
}

func waitState(t *testing.T, ns, name string, s v1alpha1.BlueGreenState) {
	t.Helper()
	require.Eventually(t, func() bool {
		p := live(t, ns, name)
		return p.Status.BlueGreenState == s && p.Status.JobStatus.State == v1alpha1.JobRunning
	}, waitFor, 100*time.Millisecond, "%s/%s %s", ns, name, s)
}

func live(t *testing.T, ns, name string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, p))
	return p
}

// commit writes next's spec and revision onto the live object of its
// name, as the sync applies a new commit (retried on conflicts with the
// controller's writes).
func commit(t *testing.T, next *v1alpha1.FlinkBlueGreenDeployment) {
	t.Helper()
	require.Eventually(t, func() bool {
		l := live(t, next.Namespace, next.Name)
		l.Spec = next.Spec
		l.Annotations[v1alpha1.RevisionAnnotation] = next.Annotations[v1alpha1.RevisionAnnotation]
		return env.Client.Update(context.Background(), l) == nil
	}, 5*time.Second, 50*time.Millisecond)
}

// object is obj as a rendered head object.
func object(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: m}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if _, ok := obj.(*v1alpha1.FlinkBlueGreenDeployment); ok {
		u.SetAPIVersion(v1alpha1.GroupVersion.String())
		u.SetKind(v1alpha1.FlinkBlueGreenDeploymentKind)
	}
	return u
}

// plan plans head as the administrator, unless in sets an Applier.
func plan(t *testing.T, in prplan.Input, head ...*unstructured.Unstructured) *prplan.Result {
	t.Helper()
	in.Head = head
	if in.Applier == nil {
		in.Applier = env.Client
	}
	in.Reader = env.Client
	if in.ObserveChild == nil {
		in.ObserveChild = reconcile.ObserveChild
	}
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	if in.HeadRevision == "" {
		in.HeadRevision = "refs/pull/7/head@sha1:" + strings.Repeat("7", 40)
	}
	r, err := prplan.Plan(context.Background(), in)
	require.NoError(t, err)
	return r
}

// job is the plan's job of name.
func job(t *testing.T, r *prplan.Result, name string) prplan.Job {
	t.Helper()
	for _, j := range r.Jobs {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no job %s in %+v", name, r.Jobs)
	return prplan.Job{}
}
