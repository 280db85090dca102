/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package cluster installs bg-gitops as a user does into a real
// single-node cluster (internal/testing/cluster) that runs its image: the
// controller's pod, its probes, its ServiceAccount token and its Lease, as
// nothing else in the suite runs them.
package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/manager"
	"bggitops.dev/bg-gitops/internal/testing/cluster"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

const (
	root      = "../.."
	namespace = "bg-gitops-system"
	// tag is the version stamped into the binary and the image's tag, as
	// make image does (bg-gitops version reads it from the Deployment).
	tag = "v0.0.0-cluster-test"
)

// kubectl apply -k of config/default, with its image set to one built
// from this checkout as the Dockerfile builds it, runs the controller: its
// pod becomes Running and Ready, it holds the leader Lease (which it can
// only reach through the in-cluster API address, the kubernetes Service),
// and `bg-gitops version` and `bg-gitops check` pass against it.
func TestApplyConfigDefaultRunsAReadyControllerThatHoldsTheLease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{})
	testenv.Require(t, err)
	t.Logf("cluster started in %s", time.Since(start).Round(100*time.Millisecond))
	defer func() {
		c.KeepDir = t.Failed()
		start := time.Now()
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		t.Logf("cluster stopped in %s", time.Since(start).Round(100*time.Millisecond))
		if left := c.Leftovers(); len(left) > 0 {
			t.Errorf("left behind:\n%s", strings.Join(left, "\n"))
		}
		if c.KeepDir {
			t.Logf("logs kept in %s", c.Dir)
		}
	}()
	bins, err := testenv.BinDir()
	testenv.Require(t, err)
	kubectl := filepath.Join(bins, "kubectl")
	dir := t.TempDir()

	start = time.Now()
	bin := buildController(ctx, t, dir)
	t.Logf("built the controller in %s", time.Since(start).Round(time.Second))
	archive := filepath.Join(dir, "image.tar")
	if err := cluster.WriteImageArchive(archive, "docker.io/library/bg-gitops:"+tag, cluster.ControllerImage(bin)); err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}

	// As config/default's comment says: kustomize edit set image, here in
	// an overlay so that the checkout is not edited.
	configDefault, err := filepath.Abs(filepath.Join(root, "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dir, "overlay")
	base, err := filepath.Rel(overlay, configDefault) // kustomize takes no absolute path
	if err != nil {
		t.Fatal(err)
	}
	kustomization := "resources:\n- " + base + "\nimages:\n- name: bg-gitops\n  newTag: " + tag + "\n"
	if err := os.MkdirAll(overlay, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	run(ctx, t, kubectl, "apply", "-k", overlay, "--kubeconfig", c.Kubeconfig())

	start = time.Now()
	pod := readyPod(ctx, t, c)
	t.Logf("pod %s Ready %s after apply", pod.Name, time.Since(start).Round(100*time.Millisecond))
	if got := pod.Spec.Containers[0].Image; got != "bg-gitops:"+tag {
		t.Errorf("the pod runs %s", got)
	}

	lease := &coordinationv1.Lease{}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Client().Get(ctx, client.ObjectKey{Namespace: namespace, Name: manager.LeaderElectionID}, lease)
		return err == nil && lease.Spec.HolderIdentity != nil && strings.HasPrefix(*lease.Spec.HolderIdentity, pod.Name), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("the controller does not hold its Lease: %v (%+v)\n%s", err, lease.Spec, podLogs(ctx, kubectl, c, pod))
	}

	out := run(ctx, t, bin, "version", "--kubeconfig", c.Kubeconfig())
	if !strings.Contains(out, "bg-gitops: "+tag) || !controllerLineNames(out, tag) {
		t.Errorf("bg-gitops version does not name the controller's version %s:\n%s", tag, out)
	}
	t.Logf("bg-gitops version:\n%s", out)
	out = run(ctx, t, bin, "check", "--kubeconfig", c.Kubeconfig())
	t.Logf("bg-gitops check:\n%s", out)
	for _, passed := range []string{"✔ controller " + namespace + "/bg-gitops-controller: 1/1 available", "✔ leader: " + pod.Name, "✔ receiver: "} {
		if !strings.Contains(out, passed) {
			t.Errorf("bg-gitops check does not say %q", passed)
		}
	}

	if t.Failed() {
		t.Log(podLogs(ctx, kubectl, c, pod))
	}
}

// controllerLineNames: a "controller:" line of bg-gitops version names
// version.
func controllerLineNames(out, version string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "controller: ") && strings.Contains(l, version) {
			return true
		}
	}
	return false
}

// buildController builds bin/bg-gitops as the Dockerfile does.
func buildController(ctx context.Context, t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bg-gitops")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "nodev",
		"-ldflags", "-s -w -X bggitops.dev/bg-gitops/internal/cli.Version="+tag, "-o", bin, "./cmd/bg-gitops")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the controller: %v\n%s", err, out)
	}
	return bin
}

// readyPod waits for the controller's pod to be Running and Ready.
func readyPod(ctx context.Context, t *testing.T, c *cluster.Cluster) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	pods := &corev1.PodList{}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Client().List(ctx, pods, client.InNamespace(namespace),
			client.MatchingLabels{manager.NameLabel: manager.NameLabelValue}); err != nil {
			return false, err
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Status.Phase == corev1.PodRunning && podReady(p) {
				pod = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Ready controller pod: %v\npods: %+v\n%s", err, pods.Items, c.Logs(2048))
	}
	return pod
}

func podReady(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podLogs is the controller's log through the API server and the kubelet.
func podLogs(ctx context.Context, kubectl string, c *cluster.Cluster, pod *corev1.Pod) string {
	out, _ := exec.CommandContext(ctx, kubectl, "logs", "-n", pod.Namespace, pod.Name, "--tail", "40",
		"--kubeconfig", c.Kubeconfig()).CombinedOutput()
	return "controller log:\n" + string(out)
}

// run runs a command and fails the test if it exits non-zero.
func run(ctx context.Context, t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}
