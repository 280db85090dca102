/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package manager builds the controller's manager: the controller-runtime
// manager with its caches, probes, metrics endpoint and leader election,
// the fence that keeps a replica that lost its lease from posting commit
// statuses, the client-side rate limit, and the two reconcilers set up in
// it (reconcile.Setup). The CLI's controller command turns its flags into
// Options.
package manager

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/kube"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/scheme"
)

// LeaderElectionID names the Lease the controller's replicas compete for.
const LeaderElectionID = "bg-gitops-controller-leader"

// NameLabel=NameLabelValue labels the controller's Deployment (config/manager,
// charts/bg-gitops): `bg-gitops check` and `version` find the controller by it.
const NameLabel, NameLabelValue = "app.kubernetes.io/name", "bg-gitops"

// ReceiverService is the Service of config/manager in front of the push
// webhook receiver.
const ReceiverService = "bg-gitops-receiver"

// The leader election timings (controller-runtime's defaults, named here
// because the fence needs the lease duration).
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
)

const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options of the controller's manager.
type Options struct {
	// MetricsAddr serves the metrics; MetricsSecure over HTTPS with the
	// API server's authentication and authorization (certificates in
	// MetricsCertDir, self-signed when empty).
	MetricsAddr    string
	MetricsSecure  bool
	MetricsCertDir string
	// ProbeAddr serves /healthz and /readyz; PprofAddr pprof ("" or "0":
	// none).
	ProbeAddr, PprofAddr string
	// LeaderElect runs one active replica, by a Lease in
	// LeaderElectionNamespace (the pod's own namespace when empty).
	LeaderElect             bool
	LeaderElectionNamespace string
	// Concurrent reconciles of each kind.
	Concurrent int
	// WatchLabelSelector selects the objects of this shard (all when
	// empty).
	WatchLabelSelector labels.Selector
	// QPS and Burst set the client-side rate limit; nil: follow the API
	// server (kube.ChooseLimiter).
	QPS   *float32
	Burst *int
	// Reconcile sets up the reconcilers; its Fence and Concurrent are set
	// here.
	Reconcile reconcile.Options
	// ReceiverOnly runs the webhook receiver alone: no reconciler, no
	// leader election (config/receiver runs it as a Deployment of its own).
	ReceiverOnly bool
}

// New builds the manager on cfg (whose rate limit it sets) with both
// reconcilers set up in it.
func New(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	Limiter(cfg, o.QPS, o.Burst).Apply(cfg)
	selector := o.WatchLabelSelector
	if selector == nil {
		selector = labels.Everything()
	}
	opts := ctrl.Options{
		Scheme:                        scheme.New(),
		Metrics:                       metricsOptions(o.MetricsAddr, o.MetricsSecure, o.MetricsCertDir),
		Client:                        reconcile.ClientOptions(),
		HealthProbeBindAddress:        o.ProbeAddr,
		PprofBindAddress:              o.PprofAddr,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{MaxConcurrentReconciles: o.Concurrent},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.GitRepository{}:            {Label: selector},
			&v1alpha1.FlinkBlueGreenDeployment{}: {Label: selector},
		}},
	}
	rec := o.Reconcile
	rec.Concurrent = o.Concurrent
	if o.ReceiverOnly {
		opts.LeaderElection = false
	}
	if opts.LeaderElection {
		fence, err := leaderFence(cfg, &opts)
		if err != nil {
			return nil, err
		}
		rec.Fence = fence
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
	if o.ReceiverOnly {
		return mgr, reconcile.SetupReceiver(mgr, rec)
	}
	return mgr, reconcile.Setup(mgr, rec)
}

// leaderFence creates the leader lock for the manager and the fence that
// reads the Lease, with a lock of its own, before a commit status is
// posted (kube.LeaseFence).
func leaderFence(cfg *rest.Config, opts *ctrl.Options) (func(context.Context) (time.Time, error), error) {
	ns := opts.LeaderElectionNamespace
	if ns == "" {
		// controller-runtime would fail with a message naming its own
		// option; the user needs the name of the flag.
		data, err := os.ReadFile(inClusterNamespaceFile)
		if err != nil {
			return nil, fmt.Errorf("--leader-elect outside a cluster needs --leader-election-namespace (%s: %w)", inClusterNamespaceFile, err)
		}
		ns = strings.TrimSpace(string(data))
	}
	id, err := kube.NewIdentity()
	if err != nil {
		return nil, err
	}
	elector, err := kube.LeaderLock(cfg, ns, LeaderElectionID, id, renewDeadline)
	if err != nil {
		return nil, fmt.Errorf("leader election lock: %w", err)
	}
	reader, err := kube.LeaderLock(cfg, ns, LeaderElectionID, id, renewDeadline)
	if err != nil {
		return nil, fmt.Errorf("leader election lock: %w", err)
	}
	lease, renew := leaseDuration, renewDeadline
	opts.LeaderElectionResourceLockInterface, opts.LeaseDuration, opts.RenewDeadline = elector, &lease, &renew
	fence := &kube.LeaseFence{Lock: reader, LeaseDuration: leaseDuration}
	return fence.Check, nil
}

// Limiter chooses the client-side rate limit of the manager's and the
// applier's clients (qps and burst nil: not given), and logs the choice.
func Limiter(cfg *rest.Config, qps *float32, burst *int) kube.Limiter {
	l := kube.ChooseLimiter(context.Background(), cfg, qps, burst)
	ctrl.Log.WithName("setup").Info("client-side rate limit", "qps", l.QPS, "burst", l.Burst, "why", l.Why)
	return l
}
