/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// cluster.go: Start and Cluster — the prerequisites, the machine-wide lock,
// the preflight and the watchdog that tears the cluster down.

package cluster

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/plane"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

const (
	// Bridge is the CNI bridge of the pods, PodCIDR their addresses.
	Bridge  = "bggitops0"
	PodCIDR = "10.244.0.0/24"
	// serviceCIDR holds the ClusterIPs; its first address is the
	// kubernetes Service, the in-cluster API address.
	serviceCIDR = "10.96.0.0/24"
	// NodeName is the one node's name, and its Hostname address, by which
	// the API server reaches the kubelet on 127.0.0.1 (logs, exec): not
	// the machine's host name, which may resolve to another address or be
	// no valid node name (the kubelet lowercases it).
	NodeName = "localhost"
	// PauseImage is the sandbox image Start builds and imports.
	PauseImage = "localhost/bg-gitops-test/pause:v1"
	// lockName is the machine-wide lock: one cluster at a time.
	lockName = "@bg-gitops-test-cluster"
	// stopTimeout is how long a component gets to exit after SIGTERM
	// before SIGKILL: its state is thrown away, and teardown.sh cleans up
	// after a killed one as after a crash.
	stopTimeout = 3 * time.Second
	// teardownTimeout bounds the watchdog's teardown.sh.
	teardownTimeout = 2 * time.Minute
)

// APIServiceIP is the kubernetes Service's ClusterIP: pods reach the API
// server there (KUBERNETES_SERVICE_HOST), DNAT'd to 127.0.0.1.
var APIServiceIP = net.ParseIP("10.96.0.1")

//go:embed teardown.sh
var teardownScript []byte

// Debian's packages (apt-get install containerd runc containernetworking-plugins iptables iproute2 procps).
var (
	containerdBin = "/usr/bin/containerd"
	ctrBin        = "/usr/bin/ctr"
	runcBin       = "/usr/sbin/runc"
	cniBinDir     = "/usr/lib/cni"
)

// Options configure Start.
type Options struct {
	// StartTimeout bounds each wait for a component; default 2 minutes.
	StartTimeout time.Duration
}

// Cluster is a running single-node cluster.
type Cluster struct {
	// Plane is etcd and kube-apiserver; Plane.Config and Plane.Client
	// are the administrator's, Plane.Kubeconfig their kubeconfig.
	Plane *plane.Plane
	// Node is the name of the one node, NodeName.
	Node string
	// Dir holds everything of the cluster; Stop removes it unless
	// KeepDir is set (to read the logs of a failed test).
	Dir     string
	KeepDir bool

	bin, ctrSocket string
	timeout        time.Duration
	procs          []*process.Process // in start order
	before         *snapshot
	lock           *net.UnixListener
	watchdog       *exec.Cmd
	watchdogIn     io.WriteCloser
	watchdogDone   chan error
}

// Start starts the cluster and waits until its node is Ready. On error it
// tears down what it started.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	bin, err := testenv.BinDir()
	if err != nil {
		return nil, err
	}
	if err := prerequisites(bin); err != nil {
		return nil, err
	}
	c = &Cluster{bin: bin, timeout: o.StartTimeout}
	if c.timeout == 0 {
		c.timeout = 2 * time.Minute
	}
	if c.lock, err = lock(ctx); err != nil {
		return nil, err
	}
	c.Node = NodeName
	if err := c.preflight(); err != nil {
		c.lock.Close()
		return nil, err
	}
	if c.Dir, err = os.MkdirTemp("", "bg-gitops-cluster-"); err != nil {
		c.lock.Close()
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()
	if err := c.startWatchdog(); err != nil {
		return c, err
	}
	if err := c.startControlPlane(ctx); err != nil {
		return c, err
	}
	if err := c.startNode(ctx); err != nil {
		return c, err
	}
	return c, nil
}

// prerequisites: root, the binaries of bin/ and Debian's packages. A
// missing one is testenv.ErrBinaryMissing (skips outside CI).
func prerequisites(bin string) error {
	if !isRoot() {
		return fmt.Errorf("%w: %w", errNotRoot, testenv.ErrBinaryMissing)
	}
	for _, b := range []string{"kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubectl"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return fmt.Errorf("%s not found in %s: %w", b, bin, testenv.ErrBinaryMissing)
		}
	}
	const install = "apt-get install containerd runc containernetworking-plugins iptables iproute2 procps; make tools does"
	for _, p := range []string{containerdBin, ctrBin, runcBin, filepath.Join(cniBinDir, "bridge")} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s not found (%s): %w", p, install, testenv.ErrBinaryMissing)
		}
	}
	// Start and teardown.sh run these from PATH.
	for _, cmd := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables-save", "ip6tables-restore", "ip", "sysctl"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return fmt.Errorf("%s not found (%s): %w", cmd, install, testenv.ErrBinaryMissing)
		}
	}
	return nil
}

// lock binds the abstract socket lockName, waiting while another cluster
// holds it. The kernel releases it when the last holder (this process and
// the watchdog) is gone: no file is left.
func lock(ctx context.Context) (*net.UnixListener, error) {
	for {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: lockName, Net: "unix"})
		if err == nil {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("another test cluster runs on this machine: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// preflight refuses to start next to the leftovers of a cluster whose
// teardown never ran: its cgroups or bridge would be taken for this one's.
func (c *Cluster) preflight() error {
	if cg, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods"); len(cg) > 0 {
		return fmt.Errorf("kubepods cgroups exist (%v): another kubelet runs, or a cluster was not torn down", cg)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", Bridge)); err == nil {
		return fmt.Errorf("bridge %s exists: a cluster was not torn down (ip link del %s)", Bridge, Bridge)
	}
	return nil
}

// startWatchdog records the machine and starts the process that runs
// teardown.sh once its stdin closes or reads a line: at Stop, or when
// this process dies. It is in a process group of its own without a
// parent-death signal, so it outlives this process; it holds the lock
// until the teardown is done.
func (c *Cluster) startWatchdog() error {
	var err error
	if c.before, err = takeSnapshot(c.Dir, Bridge, filepath.Join(c.bin, "kube-proxy")); err != nil {
		return err
	}
	script := filepath.Join(c.Dir, "teardown.sh")
	if err := os.WriteFile(script, teardownScript, 0o700); err != nil {
		return err
	}
	lockFile, err := c.lock.File()
	if err != nil {
		return err
	}
	defer lockFile.Close()
	logFile, err := os.Create(filepath.Join(c.Dir, "teardown.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	// Asked by Stop ("stop"), the directory is left to Stop; after a
	// crash the watchdog removes it too.
	cmd := exec.Command("/bin/bash", "-c",
		`if read -r line && [ "$line" = stop ]; then exec /bin/bash "$0" "$1"; fi; /bin/bash "$0" "$1"; rm -rf "$1"`,
		script, c.Dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.ExtraFiles = []*os.File{lockFile}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c.watchdogIn, err = cmd.StdinPipe(); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start watchdog: %w", err)
	}
	process.Track(cmd.Process.Pid)
	c.watchdog, c.watchdogDone = cmd, make(chan error, 1)
	go func() { c.watchdogDone <- cmd.Wait() }()
	return nil
}

// start runs a component; Stop stops it by its PID. Its command line
// names Dir (its config, data or socket), as teardown.sh expects.
func (c *Cluster) start(name, path string, args ...string) (*process.Process, error) {
	p, err := process.Start(process.Spec{Name: name, Path: path, Args: args, Log: filepath.Join(c.Dir, name+".log")})
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// Stop stops the components by PID, newest first, then has the watchdog
// run teardown.sh, and removes Dir unless KeepDir. Safe to call twice.
func (c *Cluster) Stop() error {
	if c == nil || c.watchdogDone == nil && c.lock == nil {
		return nil
	}
	var errs []error
	for i := len(c.procs) - 1; i >= 0; i-- {
		errs = append(errs, c.procs[i].Stop(stopTimeout))
	}
	c.procs = nil
	if c.Plane != nil {
		// The API server's graceful shutdown takes seconds: nothing
		// here needs it.
		for _, p := range []*process.Process{c.Plane.APIServer, c.Plane.Etcd} {
			if p != nil {
				errs = append(errs, p.Stop(stopTimeout))
			}
		}
		errs = append(errs, c.Plane.Stop())
	}
	if c.watchdogDone != nil {
		_, _ = io.WriteString(c.watchdogIn, "stop\n")
		c.watchdogIn.Close()
		select {
		case err := <-c.watchdogDone:
			if err != nil {
				errs = append(errs, fmt.Errorf("teardown: %w; %s", err, tail(filepath.Join(c.Dir, "teardown.log"), 2048)))
			}
		case <-time.After(teardownTimeout):
			errs = append(errs, fmt.Errorf("teardown did not finish in %s", teardownTimeout))
		}
		c.watchdogDone = nil
	}
	if c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
	if !c.KeepDir && c.Dir != "" {
		errs = append(errs, os.RemoveAll(c.Dir))
	}
	return errors.Join(errs...)
}

// Leftovers lists what the cluster left on the machine (after Stop):
// empty when everything it changed was restored.
func (c *Cluster) Leftovers() []string {
	if c.before == nil {
		return nil
	}
	return c.before.Leftovers(c.Dir, Bridge)
}

// Client is the administrator's client (testenv.Scheme()).
func (c *Cluster) Client() client.Client { return c.Plane.Client }

// Config is the administrator's config.
func (c *Cluster) Config() *rest.Config { return c.Plane.Config }

// Kubeconfig is the administrator's kubeconfig file.
func (c *Cluster) Kubeconfig() string { return c.Plane.Kubeconfig }

// Logs is the end of each component's log, for a failed test.
func (c *Cluster) Logs(n int) string {
	var out string
	logs, _ := filepath.Glob(filepath.Join(c.Dir, "*.log"))
	plogs, _ := filepath.Glob(filepath.Join(c.Dir, "plane", "*.log"))
	for _, l := range append(logs, plogs...) {
		out += fmt.Sprintf("==> %s <==\n%s\n", l, tail(l, n))
	}
	return out
}

// ImportImage imports a docker-save archive into the cluster's containerd
// (namespace k8s.io, where the kubelet looks).
func (c *Cluster) ImportImage(ctx context.Context, archive string) error {
	out, err := exec.CommandContext(ctx, ctrBin, "--address", c.ctrSocket, "--namespace", "k8s.io",
		"images", "import", archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", archive, err, out)
	}
	return nil
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// tail is the last n bytes of the file at path ("" when unreadable).
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
