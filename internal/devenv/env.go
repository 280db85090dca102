/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// env.go: Env and Start — bringing up and stopping the control plane, Gitea,
// the simulator and the controllers — and the pushes a story makes (Push,
// Edit).

package devenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
	"bggitops.dev/bg-gitops/internal/testing/testenv/plane"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// Options tune Start. The zero value is the demo.
type Options struct {
	// Out receives the timeline; nil discards it.
	Out io.Writer
	// ControllerLog also receives the controller's log (it is always
	// written to <Dir>/controller.log).
	ControllerLog io.Writer
	// ExamplesDir is the layout to seed the repository from; default
	// examples/repo-layout of this module.
	ExamplesDir string
	// AbortGracePeriod of the demo job (a Flink duration); default "10 s".
	AbortGracePeriod string
	// GitInterval is the GitRepository's spec.interval, the polling that
	// backs up the push webhook; default 1 minute. The e2e suite sets it
	// longer than a step may take, so that only the webhook can make a
	// push reach the cluster in time.
	GitInterval time.Duration
	// Simulator delays; the simulator's defaults (1 s) when zero.
	Simulator flinksim.Options
	// Version is the controller's version, the tag of the image its
	// published Deployment names (`bg-gitops version` reads it); default
	// "dev".
	Version string
}

// Env is a running local environment.
type Env struct {
	// Dir holds everything the environment writes; Stop removes it.
	Dir string
	// Kube is the control plane (Kube.Kubeconfig for kubectl): etcd and
	// kube-apiserver in process groups of their own that the kernel kills
	// when this process dies, even by SIGKILL.
	Kube *plane.Plane
	// BinDir holds the control-plane binaries and kubectl.
	BinDir string
	// Client talks to the API server directly (no cache).
	Client client.Client
	// Gitea is the forge; RepoName is the repository.
	Gitea *gitea.Server
	// Sim is the Flink operator simulator (Sim.Lineage()).
	Sim *flinksim.Simulator
	// ReceiverURL is the webhook receiver's root URL.
	ReceiverURL string
	// Seed is the first commit, the one the GitRepository starts from.
	Seed Commit
	// Started is when Start began; the timeline counts from it.
	Started time.Time

	out       io.Writer
	mu        sync.Mutex // guards files and the working copy
	files     map[string]string
	stopMgr   context.CancelFunc
	mgrDone   chan error
	logFile   *os.File
	log       *switchWriter
	restore   []func()
	stopOnce  sync.Once
	stopError error
}

// Commit is a pushed commit.
type Commit struct {
	SHA string
	// Revision is how bg-gitops names it: main@sha1:<sha>.
	Revision string
	// Pushed is when `git push` returned.
	Pushed time.Time
	// Message is the commit message.
	Message string
}

// Short is the abbreviated SHA.
func (c Commit) Short() string { return v1alpha1.ShortSHA(c.SHA) }

// Start brings the environment up; on error it stops what it started. ctx
// bounds the start only: the environment lives until Stop.
func Start(ctx context.Context, o Options) (e *Env, err error) {
	if o.AbortGracePeriod == "" {
		o.AbortGracePeriod = "10 s"
	}
	if o.GitInterval == 0 {
		o.GitInterval = time.Minute
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	e = &Env{Started: time.Now(), out: o.Out}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
			e = nil
		}
	}()
	if e.Dir, err = os.MkdirTemp("", "bg-gitops-dev-"); err != nil {
		return e, err
	}
	if err = e.isolate(); err != nil {
		return e, err
	}
	e.Logf("working directory %s", e.Dir)

	examples := o.ExamplesDir
	if examples == "" {
		if examples, err = examplesDir(); err != nil {
			return e, err
		}
	}
	if e.files, err = seedFiles(examples, o.AbortGracePeriod); err != nil {
		return e, err
	}

	if err = e.startServers(ctx, examples); err != nil {
		return e, err
	}
	if err = e.startController(o); err != nil {
		return e, err
	}
	if err = e.publishController(ctx, o.Version); err != nil {
		return e, err
	}
	if err = e.createGitRepository(ctx, o.GitInterval); err != nil {
		return e, err
	}
	return e, nil
}

// startServers starts the control plane and Gitea, and seeds the
// repository with the files (copied from examples).
func (e *Env) startServers(ctx context.Context, examples string) (err error) {
	if err = e.startControlPlane(ctx); err != nil {
		return err
	}
	e.Client = e.Kube.Client
	e.Logf("kube-apiserver + etcd up at %s, CRDs installed (bggitops.dev, flink.apache.org)", e.Kube.Config.Host)

	if e.Gitea, err = gitea.Start(ctx, gitea.Options{Dir: filepath.Join(e.Dir, "gitea")}); err != nil {
		return err
	}
	e.Logf("gitea up at %s (admin %s)", e.Gitea.URL, e.Gitea.AdminUser)
	if _, err = e.Gitea.CreateRepo(ctx, RepoName); err != nil {
		return err
	}
	if e.Seed, err = e.push(ctx, e.files, "fraud-detection: copy examples/repo-layout (+ demo timers for staging)"); err != nil {
		return fmt.Errorf("seed %s: %w", RepoName, err)
	}
	e.Logf("repository %s seeded from %s: commit %s", e.Gitea.Repository(RepoName), examples, e.Seed.Short())

	return nil
}

// startControlPlane starts etcd and kube-apiserver under Dir/kube and
// installs the CRDs.
func (e *Env) startControlPlane(ctx context.Context) (err error) {
	if e.BinDir, err = testenv.BinDir(); err != nil {
		return err
	}
	dir := filepath.Join(e.Dir, "kube")
	if err = os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	e.Kube, err = plane.Start(ctx, plane.Options{Dir: dir})
	return err
}

// isolate keeps git, envtest and every temporary file inside Dir: git
// reads an empty global config there (never /dev/null, which Gitea would
// replace), and TMPDIR points below Dir so that the control plane's
// certificates and etcd data go away with it.
func (e *Env) isolate() error {
	tmp := filepath.Join(e.Dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	gitconfig := filepath.Join(e.Dir, "gitconfig")
	if err := os.WriteFile(gitconfig, nil, 0o600); err != nil {
		return err
	}
	for k, v := range map[string]string{"TMPDIR": tmp, "GIT_CONFIG_GLOBAL": gitconfig, "GIT_CONFIG_NOSYSTEM": "1"} {
		old, had := os.LookupEnv(k)
		if err := os.Setenv(k, v); err != nil {
			return err
		}
		e.restore = append(e.restore, func() {
			if had {
				_ = os.Setenv(k, old)
			} else {
				_ = os.Unsetenv(k)
			}
		})
	}
	return nil
}

// startController runs the simulator and the bg-gitops controllers in one
// manager, logging to Dir/controller.log.
func (e *Env) startController(o Options) error {
	var err error
	if e.logFile, err = os.Create(filepath.Join(e.Dir, "controller.log")); err != nil {
		return err
	}
	var w io.Writer = e.logFile
	if o.ControllerLog != nil {
		w = io.MultiWriter(e.logFile, o.ControllerLog)
	}
	e.log = &switchWriter{w: w}
	logf.SetLogger(zap.New(zap.WriteTo(e.log), zap.UseDevMode(true)))

	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	e.ReceiverURL = "http://" + addr
	mgr, err := ctrl.NewManager(e.Kube.Config, ctrl.Options{
		Scheme:                 testenv.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	e.Sim = flinksim.New(o.Simulator)
	if err := e.Sim.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	if err := reconcile.Setup(mgr, reconcile.Options{
		ReceiverAddress: addr, ReceiverExternalURL: e.ReceiverURL, CacheDir: filepath.Join(e.Dir, "cache"), Concurrent: 4, SkipNameValidation: true,
		// Gitea runs on the loopback over plain HTTP; a local setup, so
		// file:// repositories are allowed too (--allow-file-urls).
		AllowInsecureHTTP: true, AllowFileURLs: true,
		// The platform repository applies the job's Namespace and objects
		// (examples/repo-layout): its namespace may write cluster-wide.
		Tenancy: reconcile.Tenancy{ClusterWideNamespaces: []string{SourceNamespace}},
		// As bg-gitops controller's --keep-snapshots.
		KeepSnapshots: bluegreen.DefaultKeepSnapshots,
	}); err != nil {
		return fmt.Errorf("controllers: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stopMgr, e.mgrDone = cancel, make(chan error, 1)
	go func() { e.mgrDone <- mgr.Start(ctx) }()
	e.Logf("controller and Flink operator simulator running; webhook receiver on %s", e.ReceiverURL)
	return nil
}

// createGitRepository creates the Secrets and the GitRepository, then the
// Gitea push webhook to the path the controller publishes.
func (e *Env) createGitRepository(ctx context.Context, interval time.Duration) error {
	webhookSecret := randomHex(16)
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SourceNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gitea-token", Namespace: SourceNamespace},
			StringData: map[string]string{"token": e.Gitea.Token}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "webhook-token", Namespace: SourceNamespace},
			StringData: map[string]string{"token": webhookSecret}},
		&v1alpha1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: GitRepositoryName, Namespace: SourceNamespace},
			Spec: v1alpha1.GitRepositorySpec{
				URL:      e.Gitea.CloneURL(RepoName),
				Ref:      &v1alpha1.GitRepositoryRef{Branch: "main"},
				Path:     "./" + Overlay,
				Interval: &metav1.Duration{Duration: interval},
				CommitStatus: &v1alpha1.CommitStatusSpec{
					Provider: "gitea", Address: e.Gitea.URL, Repository: e.Gitea.Repository(RepoName),
					SecretRef: v1alpha1.LocalObjectReference{Name: "gitea-token"},
				},
				Webhook: &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "webhook-token"}},
			},
		},
	}
	for _, o := range objs {
		if err := e.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	e.Logf("GitRepository %s/%s created: %s path ./%s, polled every %s, commit statuses to gitea", SourceNamespace, GitRepositoryName, e.Gitea.CloneURL(RepoName), Overlay, interval)

	var path string
	err := poll(ctx, 30*time.Second, func() (bool, error) {
		gr, err := e.GitRepository(ctx)
		if err != nil {
			return false, err
		}
		path = gr.Status.WebhookPath
		return path != "", nil
	})
	if err != nil {
		return fmt.Errorf("wait for status.webhookPath: %w", err)
	}
	if err := e.Gitea.CreatePushWebhook(ctx, RepoName, e.ReceiverURL+path, webhookSecret); err != nil {
		return err
	}
	e.Logf("gitea push webhook → %s%s", e.ReceiverURL, path)
	// Ready when what the look-around text shows exists: the seed applied.
	err = poll(ctx, 2*time.Minute, func() (bool, error) {
		gr, err := e.GitRepository(ctx)
		return err == nil && gr.Status.LastAppliedRevision != "", err
	})
	if err != nil {
		return fmt.Errorf("wait for the seed commit to be applied: %w", err)
	}
	e.Logf("seed commit %s applied", e.Seed.Short())
	return nil
}

// GitRepository reads the demo's GitRepository.
func (e *Env) GitRepository(ctx context.Context) (*v1alpha1.GitRepository, error) {
	gr := &v1alpha1.GitRepository{}
	err := e.Client.Get(ctx, types.NamespacedName{Namespace: SourceNamespace, Name: GitRepositoryName}, gr)
	return gr, err
}

// FBGD reads the demo's FlinkBlueGreenDeployment; nil when it does not exist.
func (e *Env) FBGD(ctx context.Context) (*v1alpha1.FlinkBlueGreenDeployment, error) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	err := e.Client.Get(ctx, types.NamespacedName{Namespace: JobNamespace, Name: JobName}, p)
	if err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return p, nil
}

// File returns the current content of a file of the repository.
func (e *Env) File(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.files[name]
}

// Push commits changes (path → content, "" deletes) on main and pushes.
func (e *Env) Push(ctx context.Context, changes map[string]string, message string) (Commit, error) {
	return e.push(ctx, changes, message)
}

// Edit replaces old by new in one file and pushes; it fails when the file
// does not contain old, so the story cannot silently push a no-op.
func (e *Env) Edit(ctx context.Context, file, old, new, message string) (Commit, error) {
	content := e.File(file)
	if !strings.Contains(content, old) {
		return Commit{}, fmt.Errorf("edit %s: %q not found", file, old)
	}
	return e.push(ctx, map[string]string{file: strings.Replace(content, old, new, 1)}, message)
}

func (e *Env) push(ctx context.Context, changes map[string]string, message string) (Commit, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	sha, err := e.Gitea.Commit(ctx, RepoName, changes, message)
	if err != nil {
		return Commit{}, err
	}
	c := Commit{SHA: sha, Revision: "main@sha1:" + sha, Pushed: time.Now(), Message: message}
	if e.files == nil {
		e.files = map[string]string{}
	}
	for k, v := range changes {
		if v == "" {
			delete(e.files, k)
		} else {
			e.files[k] = v
		}
	}
	return c, nil
}

// Files lists the repository's files.
func (e *Env) Files() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.files))
	for k := range e.files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Logf prints one timeline line, prefixed with the time since Start.
func (e *Env) Logf(format string, args ...any) {
	fmt.Fprintf(e.out, "[%6.1fs] %s\n", time.Since(e.Started).Seconds(), fmt.Sprintf(format, args...))
}

// Stop stops the controller, Gitea and the control plane, and removes
// Dir; it prints a timeline line for each thing it stopped, once it is
// stopped. Safe to call twice.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() { e.stopError = e.stop() })
	return e.stopError
}

func (e *Env) stop() error {
	errs := []error{e.stopController()}
	if e.Gitea != nil {
		errs = append(errs, e.stopped(fmt.Sprintf("gitea (PID %d)", e.Gitea.PID()), e.Gitea.Stop()))
	}
	if e.Kube != nil {
		errs = append(errs, e.stopped(e.planeProcesses(), e.Kube.Stop()))
	}
	if e.logFile != nil {
		e.log.off()
		errs = append(errs, e.logFile.Close())
	}
	for i := len(e.restore) - 1; i >= 0; i-- {
		e.restore[i]()
	}
	if e.Dir != "" {
		err := os.RemoveAll(e.Dir)
		if err == nil {
			e.Logf("removed %s", e.Dir)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// stopController stops the manager (the controllers, the receiver and the
// simulator) and waits up to 30s for it.
func (e *Env) stopController() error {
	if e.stopMgr == nil {
		return nil
	}
	e.stopMgr()
	select {
	case err := <-e.mgrDone:
		if err != nil {
			return fmt.Errorf("controller: %w", err)
		}
		e.Logf("stopped the controller and the Flink operator simulator")
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("controller did not stop within 30s")
	}
}

// planeProcesses names the control plane's processes by PID (a failed
// start may have started only some).
func (e *Env) planeProcesses() string {
	var names []string
	for _, p := range []*process.Process{e.Kube.APIServer, e.Kube.Etcd} {
		if p != nil {
			names = append(names, fmt.Sprintf("%s (PID %d)", p.Name(), p.PID()))
		}
	}
	return strings.Join(names, ", ")
}

// stopped prints that what was stopped, unless stopping it failed.
func (e *Env) stopped(what string, err error) error {
	if err == nil {
		e.Logf("stopped %s", what)
	}
	return err
}

// poll calls cond every 100ms until it is true, it fails, or timeout.
func poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// switchWriter is the controller log's destination; off() discards what
// late goroutines still log after Stop closed the file.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

func (s *switchWriter) off() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = nil
}
