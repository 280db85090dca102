/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package health checks the health checks that other tools run on the
// bg-gitops kinds, against objects the controller really writes: the Argo
// CD Lua of config/integrations/argocd run as Argo CD runs it, the Flux
// healthCheckExprs of config/integrations/flux evaluated as Flux evaluates
// them, and kstatus (sigs.k8s.io/cli-utils), which Flux, kubectl and
// cli-utils read when no expression is given. A real kube-apiserver, the
// controllers and the Flink operator simulator drive a
// FlinkBlueGreenDeployment and a GitRepository through the states users
// meet; at each the three verdicts are pinned, and on every poll in
// between they must agree with each other.
package health

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

var env *testenv.Env

const waitFor = 60 * time.Second

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	var err error
	if env, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Simulator: flinksim.New(reconciletest.SimulatorOptions)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer mgr.Stop()
	return m.Run()
}

// startController runs the bg-gitops reconcilers for ns until the test ends.
func startController(t *testing.T, ns string) {
	t.Helper()
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: ns,
		Controllers: &reconcile.Options{CacheDir: t.TempDir(), Concurrent: 2, AllowInsecureHTTP: true}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)
}

// live reads obj as Argo CD and Flux read it: unstructured, from the API
// server.
func live(t *testing.T, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u))
	return u
}

// asUnstructured is a typed object the API server returned (to a create or
// an update), as Argo CD and Flux would read it.
func asUnstructured(t *testing.T, obj client.Object, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u
}

var (
	fbgdGVK = v1alpha1.GroupVersion.WithKind(v1alpha1.FlinkBlueGreenDeploymentKind)
	gitGVK  = v1alpha1.GroupVersion.WithKind(v1alpha1.GitRepositoryKind)
)

// until polls the object until done holds and returns the version that
// made it hold. Every version read keeps the kstatus contract
// (reconciletest.CheckKstatus) and gets verdicts that agree (agree).
func until(t *testing.T, gvk schema.GroupVersionKind, ns, name, what string, done func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		u := live(t, gvk, ns, name)
		reconciletest.CheckKstatus(t, u)
		agree(t, u)
		if done(u) {
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s %s/%s: %s; last status: %v", gvk.Kind, ns, name, what, u.Object["status"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func str(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

// condition is the status of a condition of u ("" when absent) and its reason.
func condition(u *unstructured.Unstructured, typ string) (status, reason string) {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			return s, r
		}
	}
	return "", ""
}

func observed(u *unstructured.Unstructured) bool {
	g, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return found && g == u.GetGeneration()
}
