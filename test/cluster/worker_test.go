/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// worker_test.go: a hostile build in the controller's pod ends its render
// worker, under the pod's memory limit and read-only root, not the pod.

package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

// hostileBuildKillsItsWorkerNotThePod: a GitRepository of the tenant
// whose kustomization is internal/worker/testdata/hostile/memory-bomb
// (YAML aliases that multiply in memory) fails its build with the
// worker's limit named (BuildFailed, status.lastWorkerFailure; here its
// memory limit, 256 MiB), while the controller's container is
// not restarted and the tenant's other GitRepository stays Ready: the
// render worker (--render-workers, --render-max-memory of config/default)
// is bounded inside the container's memory limit.
func hostileBuildKillsItsWorkerNotThePod(ctx context.Context, t *testing.T, in *installation) {
	c := in.c
	pods := readyPods(ctx, t, c, 1)
	pod := pods[0]

	gitRoot := t.TempDir()
	bomb := gittest.NewRepo(t, gitRoot, "bomb")
	files := map[string]string{}
	src := filepath.Join(root, "internal", "worker", "testdata", "hostile", "memory-bomb")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	head := bomb.Commit(files, "memory bomb")
	bomb.Push("main")
	srv := gittest.ServeHTTP(t, gitRoot, gittest.HTTPOptions{})
	addr, err := c.ReachFromPods(port(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	grFile := filepath.Join(t.TempDir(), "bomb.yaml")
	writeFile(t, grFile, fmt.Sprintf(`apiVersion: bggitops.dev/v1alpha1
kind: GitRepository
metadata: {name: bomb, namespace: %s}
spec:
  url: http://%s/bomb.git
  ref: {branch: main}
  path: ./
  interval: 1h
`, tenant, addr))
	start := time.Now()
	run(ctx, t, in.kubectl, "apply", "-f", grFile, "--kubeconfig", c.Kubeconfig())

	gr := &v1alpha1.GitRepository{}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "bomb"}, gr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.BuildFailedCondition) && gr.Status.LastWorkerFailure != nil, nil
	})
	if err != nil {
		t.Fatalf("the memory bomb's build did not fail in a worker: %v\nstatus: %+v\n%s", err, gr.Status, controllerLogs(ctx, in))
	}
	f := gr.Status.LastWorkerFailure
	msg := apimeta.FindStatusCondition(gr.Status.Conditions, v1alpha1.BuildFailedCondition).Message
	t.Logf("%s after apply: %s", time.Since(start).Round(100*time.Millisecond), msg)
	if !strings.Contains(msg, "render limit exceeded: the worker process") {
		t.Errorf("BuildFailed does not name the worker's limit: %s", msg)
	}
	if f.Stage != v1alpha1.WorkerStageBuild || !strings.HasSuffix(f.Revision, head) {
		t.Errorf("lastWorkerFailure %+v, want the build of %s", f, head[:12])
	}

	now := &corev1.Pod{}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: namespace, Name: pod.Name}, now); err != nil {
		t.Fatal(err)
	}
	if now.UID != pod.UID || !podReady(now) || now.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("the controller's pod did not live on: ready %v, restarts %d", podReady(now), now.Status.ContainerStatuses[0].RestartCount)
	}
	jobs := &v1alpha1.GitRepository{}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "jobs"}, jobs); err != nil || !apimeta.IsStatusConditionTrue(jobs.Status.Conditions, v1alpha1.ReadyCondition) {
		t.Errorf("the tenant's other GitRepository is not Ready: %v %+v", err, jobs.Status.Conditions)
	}
}
