/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package testenv starts a real etcd + kube-apiserver (controller-runtime's
// envtest) from the binaries in bin/, optionally a kube-controller-manager
// with its garbage collector and namespace controller, installs the
// bg-gitops CRDs and the Flink test CRDs, and stops everything it started. Tests start one Env per
// package in TestMain. `bg-gitops dev` uses testenv/plane instead, whose
// processes die with their parent.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// BinDirEnv names the directory holding kube-apiserver, etcd, kubectl and
// gitea; the Makefile exports it. Without it, bin/ of the module root is used.
const BinDirEnv = "BGGITOPS_BIN_DIR"

// Env is a running control plane.
type Env struct {
	// Config authenticates as a cluster administrator.
	Config *rest.Config
	// Client uses Scheme().
	Client client.Client
	// Kubeconfig is the path of a kubeconfig file for the administrator.
	Kubeconfig string
	// BinDir holds the control-plane binaries (and kubectl).
	BinDir string

	env               *envtest.Environment
	dir               string
	controllerManager *process.Process
}

// Options tune Start.
type Options struct {
	// APIServerArgs are extra kube-apiserver flags, e.g. audit logging.
	APIServerArgs map[string]string
	// WithoutFlinkCRDs leaves the Flink test CRDs out (to test a cluster
	// without the Flink operator).
	WithoutFlinkCRDs bool
	// WithoutControllerManager leaves out kube-controller-manager, which
	// otherwise runs with its garbage collector and namespace controller,
	// so that deletions cascade through ownerReferences and namespaces are
	// deleted as in a cluster. Without it nothing deletes a dependent or a
	// namespace.
	WithoutControllerManager bool
}

// Scheme knows the built-in kinds, CRDs and the bggitops.dev types.
func Scheme() *runtime.Scheme { return scheme.New() }

// Start starts etcd, kube-apiserver and kube-controller-manager (unless
// WithoutControllerManager) and installs the CRDs.
func Start(opts Options) (*Env, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	crds, err := CRDs(!opts.WithoutFlinkCRDs)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bg-gitops-testenv-")
	if err != nil {
		return nil, err
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory:   bin,
		CRDInstallOptions:       envtest.CRDInstallOptions{CRDs: crds},
		ControlPlaneStopTimeout: 20 * time.Second,
	}
	args := te.ControlPlane.GetAPIServer().Configure()
	for k, v := range opts.APIServerArgs {
		args.Set(k, v)
	}
	cfg, err := te.Start()
	if err != nil {
		_ = te.Stop()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start control plane from %s: %w", bin, err)
	}
	e := &Env{Config: cfg, BinDir: bin, env: te, dir: dir}
	if err := e.init(); err != nil {
		_ = e.Stop()
		return nil, err
	}
	if !opts.WithoutControllerManager {
		if err := e.startControllerManager(); err != nil {
			_ = e.Stop()
			return nil, err
		}
	}
	return e, nil
}

func (e *Env) init() error {
	c, err := client.New(e.Config, client.Options{Scheme: Scheme()})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	e.Client = c
	user, err := e.env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add admin user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	e.Kubeconfig = filepath.Join(e.dir, "kubeconfig")
	return os.WriteFile(e.Kubeconfig, kc, 0o600)
}

// Stop stops the control plane and removes its files. Safe to call twice.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	var err error
	if e.controllerManager != nil {
		err = e.controllerManager.Stop(e.env.ControlPlaneStopTimeout)
	}
	err = errors.Join(err, e.env.Stop())
	e.env = nil
	return errors.Join(err, os.RemoveAll(e.dir))
}

// AddUser returns a rest.Config for a user with the given groups (for
// RBAC tests).
func (e *Env) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// BinDir returns the directory of the control-plane binaries and checks
// that they are there.
func BinDir() (string, error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s not found in %s: %w", b, dir, ErrBinaryMissing)
		}
	}
	return dir, nil
}

// moduleRoot walks up from the working directory to the directory of go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory; set %s", BinDirEnv)
		}
		dir = parent
	}
}
