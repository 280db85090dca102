/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/scheme"
)

type controllerFlags struct {
	kubeconfig         string
	metricsAddr        string
	probeAddr          string
	receiverAddr       string
	leaderElect        bool
	leaderElectionNS   string
	concurrent         int
	watchLabelSelector string
	allowRemoteBases   bool
	cacheDir           string
	qps                float32
	burst              int
	development        bool
	pprofAddr          string
}

func newControllerCommand() *cobra.Command {
	f := &controllerFlags{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the controllers, the webhook receiver, metrics and health probes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseDevMode(f.development)))
			mgr, err := newManager(f)
			if err != nil {
				return err
			}
			return mgr.Start(ctrl.SetupSignalHandler())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig; in-cluster configuration when empty")
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint; 0 disables it")
	fl.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fl.StringVar(&f.receiverAddr, "receiver-bind-address", ":9292", "address of the push webhook receiver; 0 disables it")
	fl.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader so that only one replica reconciles")
	fl.StringVar(&f.leaderElectionNS, "leader-election-namespace", "", "namespace of the leader election Lease (required outside a cluster)")
	fl.IntVar(&f.concurrent, "concurrent", 4, "reconciles running at once per kind")
	fl.StringVar(&f.watchLabelSelector, "watch-label-selector", "", "reconcile only GitRepositories and FlinkBlueGreenDeployments with these labels (sharding)")
	fl.BoolVar(&f.allowRemoteBases, "allow-remote-bases", false, "allow kustomize remote bases and resources")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "directory for git checkouts; a temporary directory when empty")
	fl.BoolVar(&f.development, "log-development", false, "human-readable logs")
	// Profiling for `make bench`; hidden because it is not for production.
	fl.StringVar(&f.pprofAddr, "pprof-bind-address", "", "address of net/http/pprof; empty disables it")
	_ = fl.MarkHidden("pprof-bind-address")
	fl.Float32Var(&f.qps, "kube-api-qps", 50, "queries per second to the Kubernetes API server")
	fl.IntVar(&f.burst, "kube-api-burst", 300, "burst of queries to the Kubernetes API server")
	return cmd
}

func newManager(f *controllerFlags) (ctrl.Manager, error) {
	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = f.qps, f.burst
	selector, err := labels.Parse(f.watchLabelSelector)
	if err != nil {
		return nil, fmt.Errorf("--watch-label-selector: %w", err)
	}
	opts := ctrl.Options{
		Scheme:                        scheme.New(),
		Metrics:                       metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:        f.probeAddr,
		PprofBindAddress:              f.pprofAddr,
		LeaderElection:                f.leaderElect,
		LeaderElectionID:              "bg-gitops-controller-leader",
		LeaderElectionNamespace:       f.leaderElectionNS,
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{MaxConcurrentReconciles: f.concurrent},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.GitRepository{}:            {Label: selector},
			&v1alpha1.FlinkBlueGreenDeployment{}: {Label: selector},
		}},
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	err = reconcile.Setup(mgr, reconcile.Options{
		ReceiverAddress:  f.receiverAddr,
		AllowRemoteBases: f.allowRemoteBases,
		CacheDir:         f.cacheDir,
		Concurrent:       f.concurrent,
	})
	return mgr, err
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}
