/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// setup.go: Options, Setup and SetupReceiver — registering the reconcilers
// and the webhook receiver with a manager, and keeping a started worker per
// slot (warmWorkers).

package reconcile

import (
	"context"
	"errors"
	"fmt"
	networkingv1 "k8s.io/api/networking/v1"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/fairqueue"
	"bggitops.dev/bg-gitops/internal/redact"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/worker"
)

// Options configure Setup.
type Options struct {
	// ReceiverAddress serves push webhooks; "" or "0" disables the receiver.
	ReceiverAddress string
	// ReceiverLimits bound the receiver's requests and bodies at once and
	// its requests per path (--receiver-max-concurrent,
	// --receiver-max-buffered-bytes, --receiver-rate-limit,
	// --receiver-rate-burst).
	ReceiverLimits source.ReceiverLimits
	// ReceiverExternalURL is the receiver's address as forges reach it
	// (an Ingress or load balancer: --receiver-external-url); every
	// GitRepository with a webhook shows it plus its path in
	// status.webhookURL. Empty: status.webhookPath only.
	ReceiverExternalURL string
	// Render is what every kustomize build starts from: AllowRemoteBases
	// (--allow-remote-bases) and the Limits (--render-timeout,
	// --render-max-file-reads, --render-max-bytes, --render-max-objects).
	// AllowFileURLs is taken from the field below.
	Render render.Options
	// RenderWorker, when set, runs every fetch and build in a worker
	// process the OS bounds (--render-max-memory, --render-max-cpu,
	// --render-workers); they run in-process when nil.
	RenderWorker *worker.Pool
	// CacheDir holds git checkouts; a temporary directory when empty.
	CacheDir string
	// MaxCacheBytes is the budget of the checkouts not in use
	// (--git-max-cache-size); 0 takes source.DefaultMaxCacheBytes,
	// negative is no budget.
	MaxCacheBytes int64
	// Concurrent reconciles per kind.
	Concurrent int
	// ConcurrentPerNamespace bounds the reconciles of one namespace that
	// run at once, per kind (--concurrent-per-namespace); 0 takes all
	// workers but one, negative is no bound. See namespaceSlots.
	ConcurrentPerNamespace int
	// HTTPClient talks to forges; http.DefaultClient with a timeout when nil.
	HTTPClient *http.Client
	// AllowInsecureHTTP (--allow-insecure-http) lets credentials travel in
	// clear text: http:// forge addresses of commitStatus (and http:// git
	// URLs with credentials). For a local or test setup only.
	AllowInsecureHTTP bool
	// AllowFileURLs (--allow-file-urls) lets spec.url (and remote bases,
	// see Render) be a file:// URL, which reads any repository on the
	// controller's file system (other GitRepositories' checkouts
	// included). For a local or test setup only.
	AllowFileURLs bool
	// GitLimits bound every git fetch and checkout (--git-max-fetch-size,
	// --git-max-file-size, --git-max-checkout-size, --git-max-files); zero
	// fields take the defaults of source.Limits.
	GitLimits source.Limits
	// Tenancy is the identity and the reach of every GitRepository's apply.
	Tenancy Tenancy
	// SkipNameValidation lets one process run several managers (tests).
	SkipNameValidation bool
	// FlinkPoll is how often a controller started without the Flink CRDs
	// looks for them (see flinkWatch); 0 takes defaultFlinkPoll.
	FlinkPoll time.Duration
	// Fence, when set, is checked before a commit status is posted and
	// before a FlinkBlueGreenDeployment's actions: with leader election,
	// that this replica still holds the lease, and until when
	// (kube.LeaseFence), so that a leader paused past its lease posts
	// nothing the new leader posts too, and sends no request after it.
	Fence func(context.Context) (time.Time, error)
	// ForgeBudget is the time the forges of one namespace may hold workers
	// for commit-status calls in every minute (--forge-budget-per-namespace);
	// 0 takes forgeBudgetPerWindow, negative is no budget. See forgeBudget.
	ForgeBudget time.Duration
	// KeepSnapshots is how many finished FlinkStateSnapshots bg-gitops
	// created for each FlinkBlueGreenDeployment it keeps beyond those
	// still in use (--keep-snapshots, default
	// bluegreen.DefaultKeepSnapshots); 0 or less keeps every one.
	KeepSnapshots int
}

// forgeBudget is the budget of ForgeBudget; nil bounds nothing.
func (o Options) forgeBudget() *forgeBudget {
	switch {
	case o.ForgeBudget < 0:
		return nil
	case o.ForgeBudget == 0:
		return newForgeBudget(forgeBudgetPerWindow, forgeBudgetWindow)
	}
	return newForgeBudget(o.ForgeBudget, forgeBudgetWindow)
}

func (o Options) flinkPoll() time.Duration {
	if o.FlinkPoll > 0 {
		return o.FlinkPoll
	}
	return defaultFlinkPoll
}

func (o Options) renderOptions() render.Options {
	ro := o.Render
	ro.AllowFileURLs = o.AllowFileURLs
	return ro
}

func (o Options) namespaceSlots() *namespaceSlots {
	return newNamespaceSlots(max(o.Concurrent, 1), o.ConcurrentPerNamespace)
}

// controller shares the workers fairly between namespaces (fairqueue):
// while several namespaces wait, each is handed a worker before any is
// handed a second.
func (o Options) controller() controller.Options {
	return controller.Options{MaxConcurrentReconciles: max(o.Concurrent, 1), SkipNameValidation: &o.SkipNameValidation,
		NewQueue: fairqueue.ForRequests}
}

// Setup registers the GitRepository and FlinkBlueGreenDeployment
// reconcilers and the webhook receiver with mgr.
func Setup(mgr ctrl.Manager, o Options) error {
	if err := checkExternalURL(o.ReceiverExternalURL); err != nil {
		return err
	}
	if o.CacheDir == "" {
		dir, err := os.MkdirTemp("", "bg-gitops-cache-")
		if err != nil {
			return err
		}
		o.CacheDir = dir
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: forgeTimeout}
	}
	applier, err := apply.NewApplier(mgr.GetConfig(), mgr.GetScheme())
	if err != nil {
		return err
	}
	if err := mgr.Add(stopping(applier.Close)); err != nil {
		return err
	}
	// One record of Secret values for the controller: what one reconciler
	// or the receiver reads, the others scrub too.
	reg := redact.NewRegistry()
	reporter := &CommitStatusReporter{Client: secretReading(mgr, reg), APIReader: mgr.GetAPIReader(), HTTP: o.HTTPClient,
		AllowInsecureHTTP: o.AllowInsecureHTTP, Fence: o.Fence, Redact: reg, Applying: &Applying{},
		Budget: o.forgeBudget()}
	gitRepos, err := setupGitRepository(mgr, o, applier, reporter)
	if err != nil {
		return err
	}
	if err := setupPullRequests(mgr, o, gitRepos); err != nil {
		return err
	}
	if err := setupFlinkBlueGreen(mgr, o, applier, reporter); err != nil {
		return err
	}
	return setupReceiver(mgr, o, reg, &gitRepos.secrets)
}

// SetupReceiver registers the webhook receiver alone with mgr (`bg-gitops
// controller --receiver-only`: a Deployment of its own that faces the
// internet, while the reconcilers run elsewhere).
func SetupReceiver(mgr ctrl.Manager, o Options) error {
	if o.ReceiverAddress == "" || o.ReceiverAddress == "0" {
		return errors.New("--receiver-only needs --receiver-bind-address")
	}
	return setupReceiver(mgr, o, redact.NewRegistry(), &secretMemo{})
}

func setupGitRepository(mgr ctrl.Manager, o Options, applier *apply.Applier, reporter *CommitStatusReporter) (*GitRepositoryReconciler, error) {
	cache, err := source.NewCache(o.CacheDir, o.MaxCacheBytes)
	if err != nil {
		return nil, err
	}
	slots := o.namespaceSlots()
	r := &GitRepositoryReconciler{
		Client: secretReading(mgr, reporter.Redact), Redact: reporter.Redact, Applying: reporter.Applying, Recorder: mgr.GetEventRecorder("bg-gitops"), Applier: applier,
		Renderer: &Renderer{Options: o.renderOptions(), Mapper: mgr.GetRESTMapper(), Worker: o.RenderWorker},
		Worker:   o.RenderWorker,
		Cache:    cache, Slots: slots, Commit: reporter,
		GitLimits: o.GitLimits, AllowFileURLs: o.AllowFileURLs, AllowInsecureHTTP: o.AllowInsecureHTTP,
		Tenancy: o.Tenancy, ReceiverExternalURL: o.ReceiverExternalURL,
	}
	r.Shares = newShares(shareSecret(o.CacheDir), cache.Discard)
	if o.RenderWorker != nil {
		if err := mgr.Add(warmWorkers{o.RenderWorker}); err != nil {
			return nil, err
		}
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.GitRepository{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, annotationsChangedBut(v1alpha1.PlanRequestedAtAnnotation)))).
		WithOptions(o.controller())
	if src := slots.source(); src != nil {
		b = b.WatchesRawSource(src)
	}
	b = b.WatchesRawSource(r.Shares.source())
	return r, b.Complete(r)
}

// setupPullRequests registers the pull-request planner: a controller of
// its own on GitRepositories, sharing the sync's cache, renderer, workers,
// applier and commit status reporter, woken by a spec change or a plan
// request and otherwise every interval (RequeueAfter).
func setupPullRequests(mgr ctrl.Manager, o Options, sync *GitRepositoryReconciler) error {
	r := &PullRequestReconciler{Client: sync.Client, Reader: mgr.GetAPIReader(), Recorder: sync.Recorder, Redact: sync.Redact,
		Applier: sync.Applier, Renderer: sync.Renderer, Worker: sync.Worker, Cache: sync.Cache,
		GitLimits: o.GitLimits, AllowFileURLs: o.AllowFileURLs, AllowInsecureHTTP: o.AllowInsecureHTTP,
		Tenancy: o.Tenancy, Commit: sync.Commit, Slots: sync.Slots}
	return ctrl.NewControllerManagedBy(mgr).Named("gitrepository-pullrequests").
		For(&v1alpha1.GitRepository{}, builder.WithPredicates(plansPullRequests, predicate.Or(
			predicate.GenerationChangedPredicate{}, annotationChanged(v1alpha1.PlanRequestedAtAnnotation)))).
		WithOptions(o.controller()).
		Complete(r)
}

// warmWorkers keeps a started worker per slot while the leader runs, so
// that a fetch or build does not wait for one to start, and ends them
// when it stops.
type warmWorkers struct{ pool *worker.Pool }

func (w warmWorkers) Start(ctx context.Context) error {
	w.pool.Warm()
	<-ctx.Done()
	w.pool.Close()
	return nil
}

// stopping runs its function when the manager stops, leader or not: it
// ends the Applier's watches. controller-runtime stops it before the
// reconcilers, whose last Applies then dry-run every object.
type stopping func()

func (f stopping) Start(ctx context.Context) error {
	<-ctx.Done()
	f()
	return nil
}

func (stopping) NeedLeaderElection() bool { return false }

func setupFlinkBlueGreen(mgr ctrl.Manager, o Options, applier *apply.Applier, reporter *CommitStatusReporter) error {
	slots := o.namespaceSlots()
	r := &FlinkBlueGreenReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("bg-gitops"), Commit: reporter,
		Impersonate: applier.ClientFor, Tenancy: o.Tenancy, Slots: slots, Fence: o.Fence, Redact: reporter.Redact,
		KeepSnapshots: o.KeepSnapshots}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.FlinkBlueGreenDeployment{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			predicate.LabelChangedPredicate{}))). // labels: the children carry them (relabel)
		Watches(&v1alpha1.GitRepository{}, handler.EnqueueRequestsFromMapFunc(deploymentsOfSource),
			builder.WithPredicates(windowsChanged)).
		// The Ingress of spec.ingress: a deleted or edited one is restored.
		Owns(&networkingv1.Ingress{}).
		WithOptions(o.controller())
	if src := slots.source(); src != nil {
		b = b.WatchesRawSource(src)
	}
	if !flinkCRDsInstalled(mgr.GetRESTMapper()) {
		mgr.GetLogger().Info("Flink CRDs not installed: FlinkBlueGreenDeployments are reported Stalled until they are", "recheck", o.flinkPoll())
		c, err := b.Build(r)
		if err != nil {
			return err
		}
		return mgr.Add(&flinkWatch{mgr: mgr, ctrl: c, every: o.flinkPoll()})
	}
	// Children carry a non-controller ownerReference (ownerRef), and
	// Owns matches only controller owners unless told otherwise: without
	// MatchEveryOwner a child's status change would wait for the
	// reschedule interval instead of waking the parent.
	return b.Owns(newUnstructured(v1alpha1.FlinkDeploymentGVK), builder.MatchEveryOwner).
		Owns(newUnstructured(v1alpha1.FlinkStateSnapshotGVK), builder.MatchEveryOwner).
		// A state record has no owner: it wakes the deployment it is of.
		Watches(newUnstructured(v1alpha1.FlinkStateSnapshotGVK), handler.EnqueueRequestsFromMapFunc(recordOwner)).
		Complete(r)
}

// checkExternalURL accepts an absolute http(s) URL without user, query or
// fragment (a path is kept: a reverse proxy may serve the receiver under
// one); "" is no URL. The error does not repeat the value, which could
// hold a password.
func checkExternalURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("--receiver-external-url: want an absolute http(s) URL without user, query or fragment, e.g. https://bg-gitops.example.com")
	}
	return nil
}

// setupReceiver serves push webhooks on its own address, reading webhook
// Secrets through memo.
func setupReceiver(mgr ctrl.Manager, o Options, reg *redact.Registry, memo *secretMemo) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.GitRepository{},
		source.WebhookPathIndex, source.IndexWebhookPath); err != nil {
		return fmt.Errorf("index webhook paths: %w", err)
	}
	if o.ReceiverAddress == "" || o.ReceiverAddress == "0" {
		return nil
	}
	rc := &source.Receiver{Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Log: mgr.GetLogger().WithName("receiver"), Indexed: true,
		Secrets: memoSecrets(secretReading(mgr, reg), memo), Limits: o.ReceiverLimits}
	// A replica is ready once its receiver listens: the manager starts the
	// receiver only after the caches synced, and until then a webhook the
	// Service routes to this replica would be refused.
	var listening atomic.Bool
	if err := mgr.AddReadyzCheck("receiver", func(*http.Request) error {
		if !listening.Load() {
			return errors.New("the webhook receiver is not listening yet")
		}
		return nil
	}); err != nil {
		return err
	}
	return mgr.Add(receiverRunnable(func(ctx context.Context) error {
		return serve(ctx, o.ReceiverAddress, rc, func() { listening.Store(true) })
	}))
}

// receiverRunnable runs on every replica, leader or not.
type receiverRunnable func(context.Context) error

func (f receiverRunnable) Start(ctx context.Context) error { return f(ctx) }
func (receiverRunnable) NeedLeaderElection() bool          { return false }

var _ manager.LeaderElectionRunnable = receiverRunnable(nil)

// receiverMaxConns bounds the connections the receiver holds at once;
// more wait in the kernel's accept queue.
const receiverMaxConns = 256

// serve runs an HTTP server until ctx ends, calling listening once it
// accepts connections. The receiver runs on every replica (it only
// annotates objects), so it needs no leader election.
func serve(ctx context.Context, addr string, h http.Handler, listening func()) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	// The receiver answers anyone: bound the connections it holds (each
	// costs memory until its timeouts drop it).
	ln = netutil.LimitListener(ln, receiverMaxConns)
	listening()
	srv := receiverServer(h)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
