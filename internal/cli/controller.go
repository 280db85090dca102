/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops controller`: its flags and the manager it runs (leader election,
// sharding, the render worker, the client's rate limiter).

package cli

import (
	"flag"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/kube"
	"bggitops.dev/bg-gitops/internal/manager"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/worker"
)

type controllerFlags struct {
	kubeconfig             string
	metricsAddr            string
	metricsSecure          bool
	metricsCertDir         string
	probeAddr              string
	receiverAddr           string
	receiverExternalURL    string
	receiverOnly           bool
	receiverLimits         source.ReceiverLimits
	leaderElect            bool
	leaderElectionNS       string
	concurrent             int
	watchLabelSelector     string
	render                 render.Options
	renderWorker           worker.Pool
	maxCacheBytes          int64
	concurrentPerNamespace int
	forgeBudget            time.Duration
	keepSnapshots          int
	git                    source.Limits
	allowFileURLs          bool
	allowInsecureHTTP      bool
	tenancy                reconcile.Tenancy
	cacheDir               string
	qps                    float32
	burst                  int
	// qpsSet and burstSet: the flags were given; otherwise the limiter
	// follows the API server (see kube.ChooseLimiter).
	qpsSet, burstSet bool
	development      bool
	// log holds --log-level (controller-runtime's zap flag, renamed).
	log       zap.Options
	pprofAddr string
}

// defaultIngressAnnotations are the Ingress annotations a tenant may set
// without a platform's word: the rewrite a path-only template needs. Any
// other controller annotation (configuration snippets, auth, allow-lists)
// acts for every host the Ingress controller serves.
var defaultIngressAnnotations = []string{"nginx.ingress.kubernetes.io/rewrite-target", "nginx.ingress.kubernetes.io/use-regex"}

func newControllerCommand() *cobra.Command { return controllerCommand(&controllerFlags{}) }

// controllerCommand is the controller command, its flags parsed into f.
func controllerCommand(f *controllerFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the controllers, the webhook receiver, metrics and health probes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.log.Development = f.development
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.log)))
			f.qpsSet, f.burstSet = cmd.Flags().Changed("kube-api-qps"), cmd.Flags().Changed("kube-api-burst")
			mgr, err := newManager(f)
			if err != nil {
				return err
			}
			return mgr.Start(ctrl.SetupSignalHandler())
		},
	}
	fl := cmd.Flags()
	bindServingFlags(fl, f)
	bindReconcileFlags(fl, f)
	bindLimitFlags(fl, f)
	bindTenancyFlags(fl, f)
	bindLogAndAPIFlags(fl, f)
	return cmd
}

// bindServingFlags binds what the controller serves: the API server it talks
// to, metrics, probes and the webhook receiver.
func bindServingFlags(fl *pflag.FlagSet, f *controllerFlags) {
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig; in-cluster configuration when empty")
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint; 0 disables it")
	fl.BoolVar(&f.metricsSecure, manager.FlagMetricsSecure, false, "serve metrics over HTTPS to callers the API server authenticates and authorizes (GET /metrics; config/default turns it on)")
	fl.StringVar(&f.metricsCertDir, manager.FlagMetricsCertDir, "", "directory with tls.crt and tls.key for --metrics-secure; a self-signed certificate when empty")
	fl.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz (ready once the webhook receiver, if enabled, listens; leader or not)")
	fl.StringVar(&f.receiverAddr, "receiver-bind-address", ":9292", "address of the push webhook receiver; 0 disables it")
	fl.StringVar(&f.receiverExternalURL, "receiver-external-url", "", "URL at which forges reach the webhook receiver (an Ingress or load balancer, e.g. https://bg-gitops.example.com); GitRepositories then show the URL to give the forge in status.webhookURL")
	fl.BoolVar(&f.receiverOnly, "receiver-only", false, "run the webhook receiver alone, without reconcilers or leader election (config/receiver: a Deployment of its own facing the internet); --leader-elect is ignored")
	fl.IntVar(&f.receiverLimits.MaxConcurrent, source.FlagReceiverMaxConcurrent, source.DefaultMaxConcurrent, "webhook requests the receiver handles at once; more are answered 503 with Retry-After; negative: no limit")
	fl.Var(newQuantity(&f.receiverLimits.MaxBufferedBytes, source.DefaultMaxBufferedBytes), source.FlagReceiverMaxBufferedBytes, "webhook body bytes the receiver holds at once (each request reserves its Content-Length, or 1Mi when it sends none, before reading); more are answered 503 with Retry-After; negative: no limit")
	fl.Float64Var(&f.receiverLimits.PathRate, source.FlagReceiverRateLimit, source.DefaultPathRate, "webhook requests per second answered on one webhook path (one GitRepository), after a burst of --receiver-rate-burst; more are answered 429 with Retry-After; negative: no limit")
	fl.IntVar(&f.receiverLimits.PathBurst, source.FlagReceiverRateBurst, source.DefaultPathBurst, "burst of --receiver-rate-limit")
}

// bindReconcileFlags binds how the reconcilers run: leader election,
// workers, the forge budget, snapshots kept and sharding.
func bindReconcileFlags(fl *pflag.FlagSet, f *controllerFlags) {
	fl.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader so that only one replica reconciles")
	fl.StringVar(&f.leaderElectionNS, "leader-election-namespace", "", "namespace of the leader election Lease (required outside a cluster)")
	fl.IntVar(&f.concurrent, "concurrent", 4, "reconciles running at once per kind")
	fl.DurationVar(&f.forgeBudget, "forge-budget-per-namespace", reconcile.DefaultForgeBudget, "time the forges of one namespace may hold workers for commit-status calls in every minute (10s per call at most); past it that namespace's statuses wait for the next minute; negative: no limit")
	fl.IntVar(&f.concurrentPerNamespace, "concurrent-per-namespace", 0, "reconciles of one namespace running at once, per kind (a fetch or a forge that hangs holds a worker); a namespace holding one never takes the last free worker; 0: all of --concurrent but one, negative: no limit")
	fl.IntVar(&f.keepSnapshots, "keep-snapshots", bluegreen.DefaultKeepSnapshots, "finished FlinkStateSnapshots bg-gitops created that are kept per FlinkBlueGreenDeployment, newest first, besides those a job restored from or a rollout uses; older ones are deleted (their savepoints are not); 0: keep every one")
	fl.StringVar(&f.watchLabelSelector, "watch-label-selector", "", "reconcile only GitRepositories and FlinkBlueGreenDeployments with these labels (sharding)")
}

// bindLimitFlags binds the limits of fetches, builds and their worker
// processes, and the git cache.
func bindLimitFlags(fl *pflag.FlagSet, f *controllerFlags) {
	fl.BoolVar(&f.render.AllowRemoteBases, "allow-remote-bases", false, "allow kustomize remote bases and resources (fetched by the controller, within the render limits)")
	fl.DurationVar(&f.render.Timeout, "render-timeout", render.DefaultTimeout, "longest a kustomize build may take, waiting for other builds included; a build that runs out of its own time is not retried until the next commit")
	fl.IntVar(&f.render.MaxFileReads, "render-max-file-reads", render.DefaultMaxFileReads, "most file reads of one kustomize build (a base included n times counts n times); negative: no limit")
	fl.Var(newQuantity(&f.render.MaxBytes, render.DefaultMaxBytes), "render-max-bytes", "most bytes one kustomize build may read, counted like the file reads; negative: no limit")
	fl.Var(newQuantity(&f.git.MaxFetchBytes, source.DefaultMaxFetchBytes), source.FlagMaxFetchSize, "most bytes one git fetch may receive (the compressed pack); negative: no limit")
	fl.Var(newQuantity(&f.git.MaxFileBytes, source.DefaultMaxFileBytes), source.FlagMaxFileSize, "largest file (or unpacked git object) a repository may hold; negative: no limit")
	fl.Var(newQuantity(&f.git.MaxCheckoutBytes, source.DefaultMaxCheckoutBytes), source.FlagMaxCheckoutSize, "largest checkout (all files) of one repository; negative: no limit")
	fl.IntVar(&f.git.MaxFiles, source.FlagMaxFiles, source.DefaultMaxFiles, "most files and directories of one checkout; negative: no limit")
	fl.IntVar(&f.git.MaxObjects, source.FlagMaxObjects, source.DefaultMaxObjects, "most objects of one received git pack (go-git's memory grows with them); negative: no limit")
	fl.BoolVar(&f.allowFileURLs, source.FlagAllowFileURLs, false, "allow file:// git URLs and remote bases, which read any repository on the controller's disk (local or test setups only)")
	fl.BoolVar(&f.allowInsecureHTTP, source.FlagAllowInsecureHTTP, false, "allow credentials over plain http:// (git URLs with a secretRef, commitStatus forge addresses; local or test setups only)")
	fl.IntVar(&f.render.MaxObjects, "render-max-objects", render.DefaultMaxObjects, "most objects one kustomize build may render; negative: no limit")
	fl.Var(newQuantity(&f.renderWorker.MaxMemory, worker.DefaultMaxMemory), "render-max-memory", "memory of the worker process that runs one git fetch or kustomize build (its data segment, RLIMIT_DATA); a fetch or build past it fails and nothing else does. Linux only")
	fl.DurationVar(&f.renderWorker.MaxCPU, "render-max-cpu", worker.DefaultMaxCPU, "CPU time of the worker process for one git fetch or kustomize build (RLIMIT_CPU, raised for each request a worker serves). Linux only")
	fl.IntVar(&f.renderWorker.Slots, "render-workers", worker.DefaultSlots, "git fetches and kustomize builds running at once, each in its own worker process, one per namespace at most; size the container for this many times --render-max-memory plus the controller. Linux only")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "directory for git checkouts; a temporary directory when empty")
	fl.Var(newQuantity(&f.maxCacheBytes, source.DefaultMaxCacheBytes), source.FlagMaxCacheSize, "most bytes of the checkouts not in use; past it the least recently used are removed (and fetched afresh when next needed); negative: no limit")
}

// bindTenancyFlags binds what tenants may use: accounts, Ingress hosts and
// annotations, namespaces that write outside their own.
func bindTenancyFlags(fl *pflag.FlagSet, f *controllerFlags) {
	fl.StringVar(&f.tenancy.DefaultServiceAccount, "default-service-account", "", "ServiceAccount impersonated, in a GitRepository's own namespace, when spec.serviceAccountName is empty")
	fl.BoolVar(&f.tenancy.RequireServiceAccount, "require-service-account", false, "refuse GitRepositories without spec.serviceAccountName when no --default-service-account is set (never apply with the controller's identity)")
	fl.StringSliceVar(&f.tenancy.ApplierAccounts, "allowed-applier-accounts", []string{"bg-gitops-applier"}, "ServiceAccounts a GitRepository may name in spec.serviceAccountName (besides --default-service-account; * for any): any other account of its namespace is refused")
	fl.StringSliceVar(&f.tenancy.FlinkAccounts, "allowed-flink-accounts", []string{"flink"}, "ServiceAccounts the jobs of a FlinkBlueGreenDeployment may run as (spec.template.spec.serviceAccount; empty, the namespace's default account, is allowed; * for any)")
	fl.StringSliceVar(&f.tenancy.Ingress.HostPatterns, "ingress-host-pattern", nil, "hosts the Ingress of a FlinkBlueGreenDeployment (spec.ingress.template and tls) and those of its FlinkDeployments (spec.template.spec.ingress, as the Flink operator fills it in) may use, e.g. {{namespace}}.apps.example.com; {{name}} and {{namespace}} are the FlinkBlueGreenDeployment's, * is one DNS label; several comma-separated; empty: any host (set it wherever tenants share an Ingress controller)")
	fl.StringSliceVar(&f.tenancy.Ingress.Annotations, "ingress-annotations", defaultIngressAnnotations, "annotations of spec.ingress written on the Ingress (keys; a key ending in / allows a prefix; * for any, empty for none); the others are dropped with a warning event; a FlinkDeployment's spec.template.spec.ingress with another is refused")
	fl.StringSliceVar(&f.tenancy.ClusterWideNamespaces, "cluster-wide-namespaces", nil, "namespaces whose GitRepositories may apply into other namespaces and cluster-scoped objects (* for all); any other GitRepository writes only namespaced objects of its own namespace")
}

// bindLogAndAPIFlags binds logging, profiling and the client-side limit of
// API requests.
func bindLogAndAPIFlags(fl *pflag.FlagSet, f *controllerFlags) {
	fl.BoolVar(&f.development, "log-development", false, "human-readable logs (and debug level unless --log-level says otherwise)")
	fl.AddGoFlag(logLevelFlag(&f.log))
	// Profiling for `make bench`; hidden because it is not for production.
	fl.StringVar(&f.pprofAddr, "pprof-bind-address", "", "address of net/http/pprof; empty disables it")
	_ = fl.MarkHidden("pprof-bind-address")
	fl.Float32Var(&f.qps, "kube-api-qps", kube.DefaultQPS, "client-side limit of queries per second to the Kubernetes API server; negative: none. "+
		"When not given: none if the API server has API Priority and Fairness (it then protects itself), else the default")
	fl.IntVar(&f.burst, "kube-api-burst", kube.DefaultBurst, "burst of the client-side limit")
}

// logLevelFlag is controller-runtime's --zap-log-level as --log-level:
// debug, info (the default), error, or N for the V(N) messages too.
func logLevelFlag(o *zap.Options) *flag.Flag {
	fs := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.BindFlags(fs)
	fl := fs.Lookup("zap-log-level")
	fl.Name = "log-level"
	fl.Usage = "log level: debug, info, error, or a number N to also log V(N) messages (debug is 1); info by default, debug with --log-development"
	return fl
}

// newManager is the controller's manager (see package manager) as the
// flags set it.
func newManager(f *controllerFlags) (ctrl.Manager, error) {
	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return nil, err
	}
	selector, err := labels.Parse(f.watchLabelSelector)
	if err != nil {
		return nil, fmt.Errorf("--watch-label-selector: %w", err)
	}
	o := manager.Options{
		MetricsAddr: f.metricsAddr, MetricsSecure: f.metricsSecure, MetricsCertDir: f.metricsCertDir,
		ProbeAddr: f.probeAddr, PprofAddr: f.pprofAddr,
		LeaderElect: f.leaderElect, LeaderElectionNamespace: f.leaderElectionNS,
		Concurrent: f.concurrent, WatchLabelSelector: selector, ReceiverOnly: f.receiverOnly,
		Reconcile: f.reconcileOptions(),
	}
	if f.qpsSet {
		o.QPS = &f.qps
	}
	if f.burstSet {
		o.Burst = &f.burst
	}
	return manager.New(cfg, o)
}

// reconcileOptions are the reconcilers' options as the flags set them.
func (f *controllerFlags) reconcileOptions() reconcile.Options {
	return reconcile.Options{
		ReceiverAddress:        f.receiverAddr,
		ReceiverExternalURL:    f.receiverExternalURL,
		ReceiverLimits:         f.receiverLimits,
		Render:                 f.render,
		RenderWorker:           renderWorker(f),
		AllowFileURLs:          f.allowFileURLs,
		AllowInsecureHTTP:      f.allowInsecureHTTP,
		GitLimits:              f.git,
		Tenancy:                f.tenancy,
		CacheDir:               f.cacheDir,
		MaxCacheBytes:          f.maxCacheBytes,
		ConcurrentPerNamespace: f.concurrentPerNamespace,
		ForgeBudget:            f.forgeBudget,
		KeepSnapshots:          f.keepSnapshots,
	}
}

// renderWorker is the pool of render workers, on Linux; elsewhere builds
// run in-process.
func renderWorker(f *controllerFlags) *worker.Pool {
	if !worker.Supported() {
		return nil
	}
	return &f.renderWorker
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}
