/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/source"
)

// StaleRetry is staleRetry, for the external tests.
const StaleRetry = staleRetry

// NewDirectGitRepositoryReconciler is the GitRepository reconciler as
// Setup builds it, reading the GitRepository through c, for tests that
// drive Reconcile by hand.
func NewDirectGitRepositoryReconciler(cfg *rest.Config, scheme *runtime.Scheme, c, live client.Client, cacheDir string) (*GitRepositoryReconciler, error) {
	applier, err := apply.NewApplier(cfg, scheme)
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, err
	}
	cache, err := source.NewCache(cacheDir, 0)
	if err != nil {
		return nil, err
	}
	return &GitRepositoryReconciler{
		Client: c, Applier: applier, Cache: cache, AllowInsecureHTTP: true,
		Renderer: &Renderer{Options: Options{}.renderOptions(), Mapper: mapper},
		Commit: &CommitStatusReporter{Client: live, APIReader: live, HTTP: &http.Client{Timeout: forgeTimeout},
			AllowInsecureHTTP: true},
	}, nil
}

// ObserveSnapshot and SnapshotObject are observeSnapshot and
// snapshotObject, for the external tests.
var (
	ObserveSnapshot = observeSnapshot
	SnapshotObject  = snapshotObject
)

// EnableShares lets r share fetches as the controller does; it returns
// the wake-ups.
func EnableShares(r *GitRepositoryReconciler) <-chan event.GenericEvent {
	r.Shares = newShares(shareSecret(""), r.Cache.Discard)
	return r.Shares.wake
}
