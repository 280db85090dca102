/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package reconciletest starts the bg-gitops controllers and the Flink
// operator simulator on a test control plane, for the tests of the
// reconcilers and of the command line.
package reconciletest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/worker"
)

// SimulatorOptions are the simulated delays the tests use.
var SimulatorOptions = flinksim.Options{StartDelay: 400 * time.Millisecond, SavepointDelay: 300 * time.Millisecond}

var namespaces atomic.Int32

// Namespace creates a namespace named after the test.
func Namespace(tb testing.TB, c client.Client) string {
	tb.Helper()
	name := fmt.Sprintf("t%d-%s", namespaces.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(tb.Name())))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		tb.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// Manager runs a controller-runtime manager until Stop.
type Manager struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   atomic.Bool
}

// Stop stops the manager and waits for it; safe to call twice.
func (m *Manager) Stop() {
	if m.once.CompareAndSwap(false, true) {
		m.cancel()
		<-m.done
	}
}

// Options select what a manager runs.
type Options struct {
	// Namespace limits the manager's cache to one namespace; all when empty.
	Namespace string
	// Namespaces adds more namespaces to Namespace's.
	Namespaces []string
	// Selected, with no Namespace, limits the GitRepositories and
	// FlinkBlueGreenDeployments the manager sees to those it selects: one
	// cluster-wide informer lists them in the order of their keys, and
	// other tests' objects are left alone.
	Selected labels.Selector
	// Controllers runs the bg-gitops reconcilers with these options; on
	// Linux their builds run in render workers (a default worker.Pool)
	// unless RenderWorker is set.
	Controllers *reconcile.Options
	// Simulator runs this Flink operator simulator.
	Simulator *flinksim.Simulator
}

// Start starts a manager on cfg with what o selects.
func Start(cfg *rest.Config, o Options) (*Manager, error) {
	mo := ctrl.Options{Scheme: scheme.New(), Metrics: metricsserver.Options{BindAddress: "0"}}
	if o.Namespace != "" {
		namespaces := map[string]cache.Config{o.Namespace: {}}
		for _, ns := range o.Namespaces {
			namespaces[ns] = cache.Config{}
		}
		mo.Cache = cache.Options{DefaultNamespaces: namespaces}
	} else if o.Selected != nil {
		mo.Cache = cache.Options{ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.GitRepository{}: {Label: o.Selected}, &v1alpha1.FlinkBlueGreenDeployment{}: {Label: o.Selected}}}
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return nil, err
	}
	if o.Simulator != nil {
		if err := o.Simulator.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	cacheDir := ""
	if o.Controllers != nil {
		co := *o.Controllers
		co.SkipNameValidation = true
		if co.CacheDir == "" {
			// What the controller would make for itself, removed when the
			// manager has stopped.
			if cacheDir, err = os.MkdirTemp("", "bg-gitops-cache-"); err != nil {
				return nil, err
			}
			co.CacheDir = cacheDir
		}
		if co.RenderWorker == nil && worker.Supported() {
			co.RenderWorker = &worker.Pool{} // as the controller runs its builds
		}
		if err := reconcile.Setup(mgr, co); err != nil {
			_ = os.RemoveAll(cacheDir)
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		_ = mgr.Start(ctx)
		if cacheDir != "" {
			_ = os.RemoveAll(cacheDir)
		}
	}()
	return m, nil
}
