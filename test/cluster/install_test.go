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

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/manager"
	"bggitops.dev/bg-gitops/internal/testing/cluster"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

const (
	root      = "../.."
	namespace = "bg-gitops-system"
	// tag is the version stamped into the binary and the image's tag, as
	// make image does (bg-gitops version reads it from the Deployment).
	tag = "v0.0.0-cluster-test"
	// newerTag is the version of the upgrade.
	newerTag = "v0.0.1-cluster-test"
)

// installation is what the subtests share: the cluster, the overlay of
// config/default they applied, the controller's binary (also the CLI).
type installation struct {
	c                     *cluster.Cluster
	kubectl, bin, overlay string
	kustomization         string
	// git serves repo over HTTP on 127.0.0.1.
	git  *gittest.HTTPServer
	repo *gittest.Repo
}

// TestInstalledAsAUserItRunsInACluster installs bg-gitops as
// docs/install.md does, with Helm and then (after helm uninstall) as
// README.md's Install section does, into a cluster that runs its image,
// and runs it there as a user would: a tenant, a GitRepository fetched over the pod
// network, a blue/green rollout driven by the Flink operator simulator, a
// push webhook through the receiver Service, a hostile build, an upgrade,
// and two replicas handing over the Lease. Each subtest starts from where the previous one left the
// cluster; one that fails ends the test.
func TestInstalledAsAUserItRunsInACluster(t *testing.T) {
	// The controller's image, and a newer one to upgrade to, built before
	// the cluster's clock starts: on a cold Go cache the first build
	// compiles every dependency (minutes on 2 cores), bounded by go test's
	// -timeout only.
	dir := t.TempDir()
	built := map[string]string{}
	for _, version := range []string{tag, newerTag} {
		start := time.Now()
		built[version] = buildController(t.Context(), t, filepath.Join(dir, version), version)
		t.Logf("built the controller %s in %s", version, time.Since(start).Round(time.Second))
	}
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
	ctrl.SetLogger(logr.Discard())
	// The Flink operator, simulated in this process as the other tests
	// run it, on the cluster's API server.
	sim, err := reconciletest.Start(c.Config(), reconciletest.Options{Simulator: flinksim.New(reconciletest.SimulatorOptions)})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	bins, err := testenv.BinDir()
	testenv.Require(t, err)
	in := &installation{c: c, kubectl: filepath.Join(bins, "kubectl")}
	for _, version := range []string{tag, newerTag} {
		bin := built[version]
		archive := filepath.Join(dir, version, "image.tar")
		if err := cluster.WriteImageArchive(archive, "docker.io/library/bg-gitops:"+version, cluster.ControllerImage(bin)); err != nil {
			t.Fatal(err)
		}
		if err := c.ImportImage(ctx, archive); err != nil {
			t.Fatal(err)
		}
		if in.bin == "" {
			in.bin = bin
		}
	}
	// After the builds: it moves HOME, and with it Go's cache.
	gittest.Isolate(t)
	gitRoot := t.TempDir()
	in.repo = gittest.NewRepo(t, gitRoot, "jobs")
	in.git = gittest.ServeHTTP(t, gitRoot, gittest.HTTPOptions{})

	// As config/default's comment says: kustomize edit set image, here in
	// an overlay so that the checkout is not edited.
	in.overlay = filepath.Join(dir, "overlay")
	in.kustomization = "resources:\n- " + relativeTo(t, in.overlay, "config", "default") + "\nimages:\n- name: bg-gitops\n  newTag: " + tag + "\n"
	writeFile(t, filepath.Join(in.overlay, "kustomization.yaml"), in.kustomization)

	steps := []struct {
		name string
		run  func(context.Context, *testing.T, *installation)
	}{
		{"helm install runs a Ready controller that holds the Lease; helm uninstall leaves the CRDs", helmInstallRunsTheController},
		{"kubectl apply -k runs a Ready controller that holds the Lease, and version and check pass", controllerRunsAndHoldsTheLease},
		{"a tenant's GitRepository fetches over the pod network and its FlinkBlueGreenDeployment goes ACTIVE_BLUE", tenantRepositoryIsApplied},
		{"a push webhook through the receiver Service applies the next commit at once, and its image rolls out to ACTIVE_GREEN", webhookRollsOutTheNextCommit},
		{"a hostile build kills its render worker, not the controller's pod", hostileBuildKillsItsWorkerNotThePod},
		{"an upgrade to a newer image keeps the job running", upgradeKeepsTheJobRunning},
		{"deleting the leader's pod hands the Lease to the second replica", leaderPodDeletedHandsOverTheLease},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(ctx, t, in) }) {
			t.Log(in.c.Logs(1024))
			return
		}
	}
}

// controllerRunsAndHoldsTheLease: kubectl apply -k of config/default,
// with its image set to one built from this checkout as the Dockerfile
// builds it, runs the controller: its pod becomes Running and Ready, it
// holds the leader Lease (which it can only reach through the in-cluster
// API address, the kubernetes Service), and `bg-gitops version` and
// `bg-gitops check` pass against it.
func controllerRunsAndHoldsTheLease(ctx context.Context, t *testing.T, in *installation) {
	run(ctx, t, in.kubectl, "apply", "-k", in.overlay, "--kubeconfig", in.c.Kubeconfig())
	controllerIsReadyAndChecked(ctx, t, in)
}

// controllerIsReadyAndChecked: one controller pod becomes Running and
// Ready with this build's image and holds the Lease, and bg-gitops version
// and check pass against it.
func controllerIsReadyAndChecked(ctx context.Context, t *testing.T, in *installation) {
	c, bin := in.c, in.bin
	start := time.Now()
	pod := readyPods(ctx, t, c, 1)[0]
	t.Logf("pod %s Ready %s after the install", pod.Name, time.Since(start).Round(100*time.Millisecond))
	if got := pod.Spec.Containers[0].Image; got != "bg-gitops:"+tag {
		t.Errorf("the pod runs %s", got)
	}
	waitLeader(ctx, t, in, pod.Name)

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
		t.Log(controllerLogs(ctx, in))
	}
}

// waitLeader waits until pod holds the leader Lease.
func waitLeader(ctx context.Context, t *testing.T, in *installation, pod string) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := in.c.Client().Get(ctx, client.ObjectKey{Namespace: namespace, Name: manager.LeaderElectionID}, lease)
		return err == nil && lease.Spec.HolderIdentity != nil && strings.HasPrefix(*lease.Spec.HolderIdentity, pod+"_"), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("%s does not hold the Lease: %v (%+v)\n%s", pod, err, lease.Spec, controllerLogs(ctx, in))
	}
}

// relativeTo is the path of the checkout's elem from dir: kustomize takes
// no absolute path.
func relativeTo(t *testing.T, dir string, elem ...string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(append([]string{root}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// writeFile writes a file and its directory.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
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

// buildController builds dir/bg-gitops of version as the Dockerfile does.
func buildController(ctx context.Context, t *testing.T, dir, version string) string {
	t.Helper()
	bin := filepath.Join(dir, "bg-gitops")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "nodev",
		"-ldflags", "-s -w -X bggitops.dev/bg-gitops/internal/cli.Version="+version, "-o", bin, "./cmd/bg-gitops")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the controller: %v\n%s", err, out)
	}
	return bin
}

// readyPods waits until n of the controller's pods are Running and
// Ready and none other is left, and returns them.
func readyPods(ctx context.Context, t *testing.T, c *cluster.Cluster, n int) []corev1.Pod {
	t.Helper()
	var ready []corev1.Pod
	pods := &corev1.PodList{}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Client().List(ctx, pods, client.InNamespace(namespace),
			client.MatchingLabels{manager.NameLabel: manager.NameLabelValue}); err != nil {
			return false, err
		}
		ready = nil
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && podReady(&p) && p.DeletionTimestamp == nil {
				ready = append(ready, p)
			}
		}
		return len(ready) == n && len(pods.Items) == n, nil
	})
	if err != nil {
		t.Fatalf("not %d Ready controller pods: %v\npods: %+v\n%s", n, err, pods.Items, c.Logs(2048))
	}
	return ready
}

func podReady(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// controllerLogs is the end of the controller pods' logs, through the API
// server and the kubelet.
func controllerLogs(ctx context.Context, in *installation) string {
	out, _ := exec.CommandContext(ctx, in.kubectl, "logs", "-n", namespace, "-l", manager.NameLabel+"="+manager.NameLabelValue,
		"--prefix", "--tail", "60", "--kubeconfig", in.c.Kubeconfig()).CombinedOutput()
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
