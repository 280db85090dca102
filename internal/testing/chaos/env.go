/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// env.go: env, the running system: startEnv starts the control plane,
// Gitea, the git server, the links, the simulator and the controller
// replicas; stop stops them.

package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
	"bggitops.dev/bg-gitops/internal/testing/testenv/plane"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// stopTimeout is how long a process gets after SIGTERM at the end.
const stopTimeout = 15 * time.Second

// env is the running system.
type env struct {
	o    Options
	dir  string
	tl   *timeline
	self string // this executable, re-executed for the roles

	plane     *plane.Plane
	c         client.Client
	cfg       *rest.Config
	etcd, api *supervised
	forge     *gitea.Server
	gitServer *supervised
	gitAddr   string
	sim       *supervised
	replicas  []*replica

	giteaLink, gitLink, receiverLink *link
	git                              *pusher
	watchers                         context.CancelFunc
}

// startEnv brings the system up; on error it stops what it started.
func startEnv(ctx context.Context, o Options, dir string, tl *timeline) (e *env, err error) {
	e = &env{o: o, dir: dir, tl: tl}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.stop())
		}
	}()
	if e.self, err = os.Executable(); err != nil {
		return e, err
	}
	if err = e.isolate(); err != nil {
		return e, err
	}
	var wctx context.Context
	wctx, e.watchers = context.WithCancel(context.Background())
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"control plane", e.startPlane}, {"gitea", e.startForge}, {"git server", e.startGitServer},
		{"links", e.startLinks}, {"repositories", e.seedRepos}, {"simulator", e.startSimulator},
		{"controllers", e.startReplicas},
	}
	for _, s := range steps {
		begin := time.Now()
		if err = s.run(ctx); err != nil {
			return e, fmt.Errorf("start %s: %w", s.name, err)
		}
		tl.logf(setupLine, "%s up (%.1fs)", s.name, time.Since(begin).Seconds())
	}
	for _, s := range e.all() {
		go s.watch(wctx)
	}
	return e, nil
}

// isolate keeps git and every temporary file inside dir: the processes
// read an empty global git config there (never /dev/null: Gitea would
// replace it) and get their own HOME and TMPDIR.
func (e *env) isolate() error {
	for _, d := range []string{"tmp", "home", "work"} {
		if err := os.MkdirAll(filepath.Join(e.dir, d), 0o700); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(e.dir, "gitconfig"), nil, 0o600)
}

// childEnv is the environment of every process the run starts.
func (e *env) childEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "TMPDIR", k == RoleEnv, strings.HasPrefix(k, "GIT_"):
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+filepath.Join(e.dir, "home"), "TMPDIR="+filepath.Join(e.dir, "tmp"),
		"GIT_CONFIG_GLOBAL="+filepath.Join(e.dir, "gitconfig"), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	return append(out, extra...)
}

func (e *env) startPlane(ctx context.Context) error {
	dir := filepath.Join(e.dir, "plane")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	p, err := plane.Start(ctx, plane.Options{Dir: dir})
	if p != nil {
		e.plane = p
	}
	if err != nil {
		return err
	}
	e.cfg = rest.CopyConfig(p.Config)
	e.cfg.QPS, e.cfg.Burst = 100, 200
	if e.c, err = client.New(e.cfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return err
	}
	e.etcd = newSupervised("etcd", p.Etcd, p.StartEtcd, e.tl)
	e.api = newSupervised("kube-apiserver", p.APIServer, p.StartAPIServer, e.tl)
	return nil
}

func (e *env) startForge(ctx context.Context) error {
	f, err := gitea.Start(ctx, gitea.Options{Dir: filepath.Join(e.dir, "gitea")})
	if err != nil {
		return err
	}
	e.forge = f
	process.Track(f.PID())
	return nil
}

// startGitServer serves Gitea's bare repositories with git http-backend
// on a port of its own, kept across restarts.
func (e *env) startGitServer(ctx context.Context) error {
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	e.gitAddr = fmt.Sprintf("127.0.0.1:%d", port)
	p, err := process.Start(process.Spec{Name: "git-server", Path: e.self, Log: filepath.Join(e.dir, "git-server.log"),
		Args: []string{"--addr", e.gitAddr, "--root", filepath.Join(e.dir, "gitea", "repos")},
		Env:  e.childEnv(RoleEnv + "=" + roleGitServer)})
	if err != nil {
		return err
	}
	start := func(ctx context.Context) error {
		if err := p.Restart(); err != nil && !errors.Is(err, process.ErrRunning) {
			return err
		}
		return waitListening(ctx, p, e.gitAddr)
	}
	e.gitServer = newSupervised("git-server", p, start, e.tl)
	return waitListening(ctx, p, e.gitAddr)
}

// startLinks puts a slowable proxy before Gitea and the git server, and
// one before the webhook receivers that picks a replica that accepts.
func (e *env) startLinks(context.Context) error {
	forge, err := url.Parse(e.forge.URL)
	if err != nil {
		return err
	}
	if e.giteaLink, err = newLink("gitea", fixed(forge.Host)); err != nil {
		return err
	}
	if e.gitLink, err = newLink("git-server", fixed(e.gitAddr)); err != nil {
		return err
	}
	e.receiverLink, err = newLink("receivers", e.receiverAddrs)
	return err
}

func fixed(addr string) func() []string { return func() []string { return []string{addr} } }

func (e *env) startSimulator(ctx context.Context) error {
	p, err := process.Start(process.Spec{Name: "flink-operator-simulator", Path: e.self,
		Log:  filepath.Join(e.dir, "simulator.log"),
		Args: []string{"--kubeconfig", e.plane.Kubeconfig, "--journal", e.journalPath()},
		Env:  e.childEnv(RoleEnv + "=" + roleSimulator)})
	if err != nil {
		return err
	}
	restart := func(context.Context) error {
		if err := p.Restart(); err != nil && !errors.Is(err, process.ErrRunning) {
			return err
		}
		return nil
	}
	e.sim = newSupervised("flink-operator-simulator", p, restart, e.tl)
	return nil
}

func (e *env) journalPath() string { return filepath.Join(e.dir, "lineage.jsonl") }

// all lists the supervised processes.
func (e *env) all() []*supervised {
	out := []*supervised{e.etcd, e.api, e.gitServer, e.sim}
	for _, r := range e.replicas {
		out = append(out, r.supervised)
	}
	var live []*supervised
	for _, s := range out {
		if s != nil {
			live = append(live, s)
		}
	}
	return live
}

// stop stops everything in reverse order of dependence and closes the
// links; every process group goes with its process.
func (e *env) stop() error {
	if e.watchers != nil {
		e.watchers()
	}
	var errs []error
	for _, r := range e.replicas {
		errs = append(errs, r.stop(stopTimeout))
	}
	for _, s := range []*supervised{e.sim, e.gitServer} {
		if s != nil {
			errs = append(errs, s.stop(stopTimeout))
		}
	}
	if e.forge != nil {
		errs = append(errs, e.forge.StopProcess())
	}
	for _, s := range []*supervised{e.api, e.etcd} {
		if s != nil {
			errs = append(errs, s.stop(stopTimeout))
		}
	}
	links := []*link{e.giteaLink, e.gitLink, e.receiverLink}
	for _, r := range e.replicas {
		links = append(links, r.api)
	}
	for _, l := range links {
		if l != nil {
			l.Close()
		}
	}
	return errors.Join(errs...)
}
