/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// node.go: starting the components — control plane, containerd, kubelet,
// kube-proxy — and the in-cluster API address.

package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/plane"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// The identities of the components, as kubeadm names them: the API
// server's bootstrap RBAC and the Node authorizer know them.
const (
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	proxyUser             = "system:kube-proxy"
)

func (c *Cluster) nodeUser() string { return "system:node:" + c.Node }

// startControlPlane starts the plane (etcd, kube-apiserver as a cluster
// runs it: Node and RBAC authorization, service-account admission, a
// serving certificate for the kubernetes Service), then the
// kube-controller-manager (all its default controllers: garbage
// collector, namespaces, service accounts, tokens, the root CA) and the
// kube-scheduler.
func (c *Cluster) startControlPlane(ctx context.Context) error {
	dir := filepath.Join(c.Dir, "plane")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var err error
	c.Plane, err = plane.Start(ctx, plane.Options{
		Dir: dir, StartTimeout: c.timeout, FlinkCRDsOnly: true,
		ServingIPs:   []net.IP{APIServiceIP},
		ServingNames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		Users: map[string][]string{
			controllerManagerUser: nil, schedulerUser: nil, proxyUser: nil,
			c.nodeUser(): {"system:nodes"},
		},
		APIServerArgs: map[string]string{
			"authorization-mode":              "Node,RBAC",
			"enable-admission-plugins":        "NodeRestriction",
			"disable-admission-plugins":       "",
			"service-cluster-ip-range":        serviceCIDR,
			"kubelet-preferred-address-types": "Hostname",
		},
	})
	if err != nil {
		return fmt.Errorf("control plane: %w", err)
	}
	kcm, err := c.kubeconfig(controllerManagerUser)
	if err != nil {
		return err
	}
	if _, err := c.start("kube-controller-manager", filepath.Join(c.bin, "kube-controller-manager"),
		"--kubeconfig", kcm, "--leader-elect=false", "--secure-port=0",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file", c.Plane.ServiceAccountKey,
		"--root-ca-file", c.Plane.ServingCert,
		"--service-cluster-ip-range", serviceCIDR); err != nil {
		return err
	}
	sched, err := c.kubeconfig(schedulerUser)
	if err != nil {
		return err
	}
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	_, err = c.start("kube-scheduler", filepath.Join(c.bin, "kube-scheduler"),
		"--kubeconfig", sched, "--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port))
	return err
}

// kubeconfig writes the kubeconfig of a user of the plane.
func (c *Cluster) kubeconfig(user string) (string, error) {
	path := filepath.Join(c.Dir, strings.ReplaceAll(user, ":", "-")+".kubeconfig")
	return path, plane.WriteKubeconfig(path, c.Plane.UserConfig(user))
}

// startNode builds and imports the pause image, starts containerd, the
// bridge with the in-cluster API address, the kubelet and kube-proxy, and
// waits for the node to be Ready and the default ServiceAccount to exist.
func (c *Cluster) startNode(ctx context.Context) error {
	if err := c.startContainerd(ctx); err != nil {
		return err
	}
	if err := c.importPause(ctx); err != nil {
		return err
	}
	if err := c.apiAddress(); err != nil {
		return err
	}
	if err := c.startKubelet(); err != nil {
		return err
	}
	if err := c.startProxy(); err != nil {
		return err
	}
	return c.waitNode(ctx)
}

func (c *Cluster) startContainerd(ctx context.Context) error {
	d := filepath.Join(c.Dir, "containerd")
	c.ctrSocket = filepath.Join(d, "containerd.sock")
	cni := filepath.Join(c.Dir, "cni")
	for _, dir := range []string{d, filepath.Join(cni, "net.d")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	// restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, so runc
	// cannot lower the sandbox's oom_score_adj and no pod would start.
	// runc's Root and the opt plugin's path keep their state in Dir.
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = %[7]q
        Root = %[8]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[9]q
    conf_dir = %[10]q
`, filepath.Join(d, "root"), filepath.Join(d, "state"), c.ctrSocket, c.ctrSocket+".ttrpc", filepath.Join(d, "opt"),
		PauseImage, runcBin, filepath.Join(d, "runc"), cniBinDir, filepath.Join(cni, "net.d"))
	// The routes entry gives pods a default route through the bridge, to
	// reach ClusterIPs; the bridge plugin turns on ip_forward.
	conflist := fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "bg-gitops-test", "plugins": [
  {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}},
  {"type": "loopback"}]}
`, Bridge, PodCIDR, filepath.Join(cni, "ipam"))
	files := map[string]string{filepath.Join(d, "config.toml"): config, filepath.Join(cni, "net.d", "10-bg-gitops-test.conflist"): conflist}
	for path, data := range files {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			return err
		}
	}
	p, err := c.start("containerd", containerdBin, "--config", filepath.Join(d, "config.toml"))
	if err != nil {
		return err
	}
	return c.wait(ctx, p, func() bool {
		return exec.CommandContext(ctx, ctrBin, "--address", c.ctrSocket, "version").Run() == nil
	})
}

// importPause builds cmd pause (this module's) and imports it as the
// sandbox image.
func (c *Cluster) importPause(ctx context.Context) error {
	bin := filepath.Join(c.Dir, "pause")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "bggitops.dev/bg-gitops/internal/testing/cluster/pause")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build pause: %w: %s", err, out)
	}
	archive := filepath.Join(c.Dir, "pause.tar")
	img := Image{Files: []ImageFile{{Path: "/pause", Source: bin, Mode: 0o755}}, Entrypoint: []string{"/pause"}, User: "65535:65535"}
	if err := WriteImageArchive(archive, PauseImage, img); err != nil {
		return err
	}
	return c.ImportImage(ctx, archive)
}

// apiAddress makes the kubernetes Service's ClusterIP reach the API server
// from the pods: the bridge exists before the first pod (the bridge plugin
// takes it as it is), route_localnet lets it route to 127.0.0.1, and one
// DNAT rule sends APIServiceIP:443 from the bridge to the API server.
func (c *Cluster) apiAddress() error {
	port := strings.TrimPrefix(c.Plane.Config.Host, "https://127.0.0.1:")
	cmds := [][]string{
		{"ip", "link", "add", Bridge, "type", "bridge"},
		{"ip", "link", "set", Bridge, "up"},
		{"sysctl", "-q", "-w", "net.ipv4.conf." + Bridge + ".route_localnet=1"},
		{"iptables", "-t", "nat", "-I", "PREROUTING", "-i", Bridge, "-d", APIServiceIP.String() + "/32", "-p", "tcp",
			"--dport", "443", "-m", "comment", "--comment", "bg-gitops-test-apiserver",
			"-j", "DNAT", "--to-destination", "127.0.0.1:" + port},
	}
	for _, cmd := range cmds {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(cmd, " "), err, out)
		}
	}
	return nil
}

// HostIP is the bridge's address, the pods' gateway (the bridge plugin
// gives it to the bridge with the first pod): ReachFromPods makes a port
// of 127.0.0.1 answer there.
var HostIP = net.ParseIP("10.244.0.1")

// ReachFromPods makes a server of the test process that listens on
// 127.0.0.1:port reachable from the pods at HostIP:port, as the API server
// is at APIServiceIP: one DNAT rule for packets from the bridge (which
// route_localnet lets route to 127.0.0.1); teardown.sh removes it with
// the others. It returns HostIP:port.
func (c *Cluster) ReachFromPods(port int) (string, error) {
	p := strconv.Itoa(port)
	cmd := []string{"iptables", "-t", "nat", "-I", "PREROUTING", "-i", Bridge, "-d", HostIP.String() + "/32", "-p", "tcp",
		"--dport", p, "-m", "comment", "--comment", "bg-gitops-test-host",
		"-j", "DNAT", "--to-destination", "127.0.0.1:" + p}
	if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(cmd, " "), err, out)
	}
	return net.JoinHostPort(HostIP.String(), p), nil
}

func (c *Cluster) startKubelet() error {
	d := filepath.Join(c.Dir, "kubelet")
	if err := os.MkdirAll(filepath.Join(d, "root"), 0o700); err != nil {
		return err
	}
	ports, err := testenv.FreePorts(2)
	if err != nil {
		return err
	}
	// Anonymous and AlwaysAllow on 127.0.0.1: the API server has no
	// kubelet client certificate. failCgroupV1: these machines are on
	// cgroup v1.
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://%s
podLogsDir: %s
resolvConf: /etc/resolv.conf
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%%", "imagefs.available": "1%%"}
imageGCHighThresholdPercent: 100
serializeImagePulls: false
`, ports[0], ports[1], c.ctrSocket, filepath.Join(d, "pod-logs"))
	if err := os.WriteFile(filepath.Join(d, "config.yaml"), []byte(config), 0o600); err != nil {
		return err
	}
	kc, err := c.kubeconfig(c.nodeUser())
	if err != nil {
		return err
	}
	_, err = c.start("kubelet", filepath.Join(c.bin, "kubelet"), "--config", filepath.Join(d, "config.yaml"),
		"--kubeconfig", kc, "--root-dir", filepath.Join(d, "root"), "--hostname-override", c.Node)
	return err
}

// startProxy runs kube-proxy in iptables mode. Node ports only on the
// bridge's address (HostIP): not on the node's primary address, which
// would open them to the machine's network, nor on 127.0.0.1, for which
// kube-proxy turns on route_localnet on every interface. Conntrack
// settings left as they are.
func (c *Cluster) startProxy() error {
	kc, err := c.kubeconfig(proxyUser)
	if err != nil {
		return err
	}
	ports, err := testenv.FreePorts(2)
	if err != nil {
		return err
	}
	_, err = c.start("kube-proxy", filepath.Join(c.bin, "kube-proxy"),
		"--kubeconfig", kc, "--hostname-override", c.Node, "--proxy-mode", "iptables", "--cluster-cidr", PodCIDR,
		"--healthz-bind-address", "127.0.0.1:"+strconv.Itoa(ports[0]),
		"--metrics-bind-address", "127.0.0.1:"+strconv.Itoa(ports[1]),
		"--conntrack-max-per-core", "0", "--conntrack-tcp-timeout-established", "0", "--conntrack-tcp-timeout-close-wait", "0",
		"--nodeport-addresses", HostIP.String()+"/32")
	return err
}

// waitNode waits until the node is Ready and the service-account
// controller made the default namespace's ServiceAccount.
func (c *Cluster) waitNode(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, p := range c.procs {
			if !p.Running() {
				return false, fmt.Errorf("%s exited: %v; its log ends:\n%s", p.Name(), p.ExitErr(), tail(p.Log(), 2048))
			}
		}
		n := &corev1.Node{}
		if err := c.Plane.Client.Get(ctx, client.ObjectKey{Name: c.Node}, n); err != nil || !nodeReady(n) {
			return false, nil
		}
		sa := &corev1.ServiceAccount{}
		return c.Plane.Client.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceDefault, Name: "default"}, sa) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("node %s not ready: %w\n%s", c.Node, err, c.Logs(1024))
	}
	return nil
}

// wait polls ok until it holds, proc exits or the start timeout passes.
func (c *Cluster) wait(ctx context.Context, proc *process.Process, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	for !ok() {
		if !proc.Running() {
			return fmt.Errorf("%s exited: %v; its log ends:\n%s", proc.Name(), proc.ExitErr(), tail(proc.Log(), 2048))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w; its log ends:\n%s", proc.Name(), ctx.Err(), tail(proc.Log(), 2048))
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}
