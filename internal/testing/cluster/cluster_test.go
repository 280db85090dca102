/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// The cluster runs a pod on the bridge, whose logs the API server reads
// from the kubelet whatever this machine's host name, opens a NodePort Service on the
// bridge's address only (not on the machine's network), and its Stop
// leaves nothing behind: no process, mount, cgroup, bridge, network
// namespace, iptables rule, changed sysctl or directory of containerd or
// the kubelet.
func TestClusterRunsAPodAndStopLeavesNothingBehind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{})
	testenv.Require(t, err)
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()

	runPod(ctx, t, c, "sleeper")
	nodePortsOnlyOnTheBridge(ctx, t, c)
	// The API server reaches the kubelet (logs, exec) by the node's name.
	kubectl := exec.CommandContext(ctx, filepath.Join(binDir(t), "kubectl"), "--kubeconfig", c.Kubeconfig(), "logs", "sleeper")
	if out, err := kubectl.CombinedOutput(); err != nil {
		t.Errorf("kubectl logs: %v: %s", err, out)
	}

	stopped = true
	if err := c.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if left := c.Leftovers(); len(left) > 0 {
		t.Errorf("left behind:\n%s", strings.Join(left, "\n"))
	}
	if leaks := process.LeaksAfter(5 * time.Second); len(leaks) > 0 {
		t.Errorf("process groups left: %v", leaks)
	}
}

// runPod runs a pod of the pause image and waits until it has an address
// on the bridge.
func runPod(ctx context.Context, t *testing.T, c *Cluster, name string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "pause", Image: PauseImage, ImagePullPolicy: corev1.PullNever,
		}}},
	}
	if err := c.Client().Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Client().Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return err == nil && pod.Status.Phase == corev1.PodRunning && pod.Status.PodIP != "", client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("pod not running: %v (status %+v)\n%s", err, pod.Status, c.Logs(2048))
	}
	t.Logf("pod %s running at %s", pod.Name, pod.Status.PodIP)
}

// nodePortsOnlyOnTheBridge creates a NodePort Service and checks that
// kube-proxy sends its node port to the pods from HostIP only: every jump
// to KUBE-NODEPORTS names HostIP as the destination.
func nodePortsOnlyOnTheBridge(ctx context.Context, t *testing.T, c *Cluster) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "nodeport", Namespace: metav1.NamespaceDefault},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "none"},
			Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if err := c.Client().Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	dport := fmt.Sprintf("--dport %d ", svc.Spec.Ports[0].NodePort)
	var nat string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		// Without endpoints its node port is a REJECT in the filter table.
		all, err := exec.CommandContext(ctx, "iptables-save").Output()
		if err != nil || !strings.Contains(string(all), dport) {
			return false, nil
		}
		out, err := exec.CommandContext(ctx, "iptables-save", "-t", "nat").Output()
		nat = string(out)
		return err == nil && strings.Contains(nat, "-j KUBE-NODEPORTS"), nil
	})
	if err != nil {
		t.Fatalf("kube-proxy wrote no node port rules: %v\n%s", err, nat)
	}
	for _, rule := range strings.Split(nat, "\n") {
		if strings.HasSuffix(rule, "-j KUBE-NODEPORTS") && !strings.Contains(rule, "-d "+HostIP.String()+"/32 ") {
			t.Errorf("a node port is open beyond the bridge: %s", rule)
		}
	}
}

// childEnv makes the test binary the child of
// TestAKilledTestProcessLeavesNothingBehind.
const childEnv = "BGGITOPS_CLUSTER_TEST_CHILD"

// A test process killed with SIGKILL while its cluster runs a pod leaves
// nothing behind either: its components die with it (parent-death
// signal), and the watchdog tears down the rest and removes the directory.
func TestAKilledTestProcessLeavesNothingBehind(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		runChild(t)
		return
	}
	testenv.Require(t, prerequisites(binDir(t)))
	before, err := takeSnapshot(t.TempDir(), Bridge, "")
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestAKilledTestProcessLeavesNothingBehind$", "-test.v")
	child.Env = append(os.Environ(), childEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := process.StartCommand(child); err != nil {
		t.Fatal(err)
	}
	dir := ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		t.Log("child: ", line)
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "cluster-ready "); ok {
			dir = d
			break
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if dir == "" {
		t.Fatal("the child did not start its cluster")
	}
	// The watchdog removes the directory last and then drops the lock.
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	l, err := lock(ctx)
	if err != nil {
		t.Fatalf("the watchdog did not finish: %v", err)
	}
	l.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the watchdog did not remove %s: %v", dir, err)
	}
	if left := before.Leftovers(dir, Bridge); len(left) > 0 {
		t.Errorf("left behind:\n%s", strings.Join(left, "\n"))
	}
}

// runChild starts a cluster with a running pod, says where, and waits to
// be killed.
func runChild(t *testing.T) {
	ctx := context.Background()
	c, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runPod(ctx, t, c, "doomed")
	fmt.Printf("\ncluster-ready %s\n", c.Dir)
	select {}
}

func binDir(t *testing.T) string {
	bin, err := testenv.BinDir()
	testenv.Require(t, err)
	return bin
}
