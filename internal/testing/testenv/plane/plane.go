/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// plane.go: Plane and Start: etcd and kube-apiserver on free ports, with
// the CRDs installed.

package plane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// stopTimeout is how long a component gets to exit after SIGTERM.
const stopTimeout = 20 * time.Second

// Options configure Start.
type Options struct {
	// Dir holds the data, credentials, kubeconfig and logs; it must exist.
	Dir string
	// StartTimeout bounds each wait for a component to answer; default 60s.
	StartTimeout time.Duration
	// ServingIPs and ServingNames are added to the serving certificate's
	// 127.0.0.1 and localhost: the addresses pods of a cluster reach the
	// API server by (internal/testing/cluster).
	ServingIPs   []net.IP
	ServingNames []string
	// Users get a static token each (user name to groups), for the
	// components of a cluster; UserConfig returns their configs.
	Users map[string][]string
	// APIServerArgs replace the kube-apiserver flags of the same name, or
	// are added (name without dashes; an empty value is passed as "").
	APIServerArgs map[string]string
	// FlinkCRDsOnly installs the Flink test CRDs and not bg-gitops' own,
	// for a test that installs bg-gitops as a user does.
	FlinkCRDsOnly bool
}

// Plane is a running etcd + kube-apiserver.
type Plane struct {
	// Etcd and APIServer are the two processes (kill, pause, restart).
	Etcd, APIServer *process.Process
	// Config authenticates as a cluster administrator.
	Config *rest.Config
	// Client uses testenv.Scheme().
	Client client.Client
	// Kubeconfig is the path of a kubeconfig file for the administrator.
	Kubeconfig string
	// ServingCert is the API server's certificate and its CA (PEM), what a
	// client trusts; ServiceAccountKey signs service-account tokens.
	ServingCert, ServiceAccountKey string

	dir     string
	timeout time.Duration
	etcdURL string
	opts    Options
	tokens  map[string]string
}

// Start starts etcd and kube-apiserver on free 127.0.0.1 ports and
// installs the bg-gitops and Flink CRDs. On error it stops what it started.
func Start(ctx context.Context, o Options) (p *Plane, err error) {
	bin, err := testenv.BinDir()
	if err != nil {
		return nil, err
	}
	p = &Plane{dir: o.Dir, timeout: o.StartTimeout, opts: o}
	if p.timeout == 0 {
		p.timeout = 60 * time.Second
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.Stop())
		}
	}()
	ports, err := testenv.FreePorts(3)
	if err != nil {
		return p, err
	}
	creds, err := writeCredentials(o.Dir, ports[2], o)
	if err != nil {
		return p, err
	}
	p.Config, p.Kubeconfig, p.tokens = creds.config, creds.kubeconfig, creds.users
	p.ServingCert, p.ServiceAccountKey = creds.servingCert, creds.saKey
	if err := p.startEtcd(bin, ports[0], ports[1]); err != nil {
		return p, err
	}
	if err := p.startAPIServer(ctx, bin, ports[2], creds); err != nil {
		return p, err
	}
	return p, p.install()
}

func (p *Plane) startEtcd(bin string, client, peer int) error {
	p.etcdURL = "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	var err error
	p.Etcd, err = process.Start(process.Spec{
		Name: "etcd", Path: filepath.Join(bin, "etcd"), Log: filepath.Join(p.dir, "etcd.log"),
		Args: []string{"--data-dir", filepath.Join(p.dir, "etcd"),
			"--listen-client-urls", p.etcdURL, "--advertise-client-urls", p.etcdURL,
			"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
			"--initial-cluster", "default=" + peerURL,
			// As envtest: durability across a machine crash is not tested.
			"--unsafe-no-fsync"},
	})
	if err != nil {
		return err
	}
	return p.WaitEtcd(context.Background())
}

func (p *Plane) startAPIServer(ctx context.Context, bin string, port int, c credentials) error {
	var err error
	p.APIServer, err = process.Start(process.Spec{
		Name: "kube-apiserver", Path: filepath.Join(bin, "kube-apiserver"), Log: filepath.Join(p.dir, "kube-apiserver.log"),
		Args: withArgs([]string{
			"--etcd-servers", p.etcdURL,
			"--bind-address", "127.0.0.1",
			// No kubernetes Service endpoints to keep: nothing routes to it.
			"--endpoint-reconciler-type", "none",
			"--secure-port", strconv.Itoa(port),
			"--tls-cert-file", c.servingCert, "--tls-private-key-file", c.servingKey,
			"--token-auth-file", c.tokens,
			"--authorization-mode", "RBAC",
			"--service-cluster-ip-range", "10.0.0.0/24",
			"--service-account-issuer", "https://127.0.0.1:" + strconv.Itoa(port),
			"--service-account-key-file", c.saKey, "--service-account-signing-key-file", c.saKey,
			// As envtest: no controller-manager creates default accounts.
			"--disable-admission-plugins", "ServiceAccount",
			"--allow-privileged=true",
		}, p.opts.APIServerArgs),
	})
	if err != nil {
		return err
	}
	return p.WaitAPIServer(ctx)
}

// install creates the client and the CRDs.
func (p *Plane) install() error {
	var err error
	if p.Client, err = client.New(p.Config, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	crds, err := testenv.CRDs(true)
	if p.opts.FlinkCRDsOnly {
		crds, err = testenv.FlinkCRDs()
	}
	if err != nil {
		return err
	}
	_, err = envtest.InstallCRDs(p.Config, envtest.CRDInstallOptions{CRDs: crds, MaxTime: p.timeout})
	if err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	return nil
}

// Stop kills the API server, then etcd; the directory is left to the
// caller. Safe to call twice.
func (p *Plane) Stop() error {
	var errs []error
	for _, proc := range []*process.Process{p.APIServer, p.Etcd} {
		if proc != nil {
			errs = append(errs, proc.Stop(stopTimeout))
		}
	}
	return errors.Join(errs...)
}

// UserConfig is the config of a user of Options.Users (nil for another).
func (p *Plane) UserConfig(name string) *rest.Config {
	token, ok := p.tokens[name]
	if !ok {
		return nil
	}
	cfg := rest.AnonymousClientConfig(p.Config)
	cfg.BearerToken = token
	return cfg
}

// WriteKubeconfig writes a kubeconfig file for cfg (e.g. a UserConfig).
func WriteKubeconfig(path string, cfg *rest.Config) error { return writeKubeconfig(path, cfg) }

// withArgs replaces the flags of args named in extra, in place, and adds
// the others, sorted.
func withArgs(args []string, extra map[string]string) []string {
	out := make([]string, 0, len(args)+2*len(extra))
	for i := 0; i < len(args); i++ {
		name, _, _ := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		if _, ok := extra[name]; ok {
			if !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++ // its value
			}
			continue
		}
		out = append(out, args[i])
	}
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, "--"+name+"="+extra[name])
	}
	return out
}

// ensureDir makes sure dir exists with private permissions.
func ensureDir(dir string) error { return os.MkdirAll(dir, 0o700) }
