/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// replicas.go: replica, one `bg-gitops controller` process with its own
// link to the API server, and leader and pickReplica, which find the one a
// fault hits.

package chaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// leaseNamespace holds the controllers' leader election Lease.
const leaseNamespace = "bg-gitops-system"

// replica is one `bg-gitops controller` process. It reaches the API
// server through a link of its own, which the nemesis holds.
type replica struct {
	*supervised
	name                        string
	metrics, probe, receiverURL string
	api                         *link
}

func (e *env) startReplicas(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}
	if err := e.c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	for i := range 2 {
		r, err := e.startReplica(i)
		if err != nil {
			return err
		}
		e.replicas = append(e.replicas, r)
	}
	return e.waitLeader(ctx, 90*time.Second)
}

func (e *env) startReplica(i int) (*replica, error) {
	addrs := make([]string, 3)
	for k := range addrs {
		port, err := testenv.FreePort()
		if err != nil {
			return nil, err
		}
		addrs[k] = fmt.Sprintf("127.0.0.1:%d", port)
	}
	r := &replica{name: fmt.Sprintf("controller-%d", i), metrics: addrs[0], probe: addrs[1], receiverURL: addrs[2]}
	kubeconfig, err := e.linkKubeconfig(r)
	if err != nil {
		return nil, err
	}
	path, args, env := e.bgGitops()
	args = append(args, "controller", "--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", leaseNamespace,
		"--metrics-bind-address", r.metrics, "--health-probe-bind-address", r.probe,
		"--receiver-bind-address", r.receiverURL,
		"--cache-dir", filepath.Join(e.dir, r.name+"-cache"),
		// A local setup: Gitea and git over plain HTTP on the loopback.
		"--allow-insecure-http", "--log-development")
	p, err := process.Start(process.Spec{Name: r.name, Path: path, Args: args, Env: env,
		Log: filepath.Join(e.dir, r.name+".log")})
	if err != nil {
		r.api.Close()
		return nil, err
	}
	restart := func(context.Context) error {
		if err := p.Restart(); err != nil && !errors.Is(err, process.ErrRunning) {
			return err
		}
		return nil
	}
	r.supervised = newSupervised(r.name, p, restart, e.tl)
	return r, nil
}

// linkKubeconfig starts r's link to the API server and writes a
// kubeconfig that goes through it.
func (e *env) linkKubeconfig(r *replica) (string, error) {
	api, err := url.Parse(e.plane.Config.Host)
	if err != nil {
		return "", err
	}
	if r.api, err = newLink(r.name+"-api", fixed(api.Host)); err != nil {
		return "", err
	}
	kc, err := clientcmd.LoadFromFile(e.plane.Kubeconfig)
	if err != nil {
		return "", err
	}
	for _, c := range kc.Clusters {
		c.Server = "https://" + r.api.ln.Addr().String()
	}
	path := filepath.Join(e.dir, r.name+".kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

// bgGitops is how to run bg-gitops: Options.BGGitops, or this executable
// in the bg-gitops role.
func (e *env) bgGitops() (path string, args, env []string) {
	if e.o.BGGitops != "" {
		return e.o.BGGitops, nil, e.childEnv()
	}
	return e.self, nil, e.childEnv(RoleEnv + "=" + roleBGGitops)
}

// receiverAddrs are the receivers in random order (any replica's receiver
// annotates the GitRepository, as behind a Service).
func (e *env) receiverAddrs() []string {
	out := make([]string, 0, len(e.replicas))
	for _, r := range e.replicas {
		out = append(out, r.receiverURL)
	}
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// isLeader reads the replica's leader_election_master_status metric.
func (r *replica) isLeader() bool {
	hc := &http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

// leader returns the replica that holds the lease, or nil.
func (e *env) leader() *replica {
	for _, r := range e.replicas {
		if r.proc.Running() && r.isLeader() {
			return r
		}
	}
	return nil
}

// pickReplica is the leader or the other one; nil when there is none.
func (e *env) pickReplica(role string) *replica {
	l := e.leader()
	if role == "leader" || l == nil {
		return l
	}
	for _, r := range e.replicas {
		if r != l {
			return r
		}
	}
	return nil
}

func (e *env) waitLeader(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if e.leader() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("no controller replica became leader within %s", timeout)
}
