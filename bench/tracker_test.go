//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// tracker follows GitRepositories, FlinkBlueGreenDeployments and Leases
// through watches, so a figure ends when the watch event that satisfies it
// arrives (no polling interval in the measurement).
type tracker struct {
	mu     sync.Mutex
	grs    map[string]*v1alpha1.GitRepository
	fbgds  map[string]*v1alpha1.FlinkBlueGreenDeployment
	leases map[string]*coordinationv1.Lease
	// flux holds Flux's GitRepositories and Kustomizations (flux_test.go).
	flux   map[string]fluxObj
	notify chan struct{}
}

func startTracker(ctx context.Context, cfg *rest.Config) (*tracker, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return nil, err
	}
	tr := &tracker{grs: map[string]*v1alpha1.GitRepository{}, fbgds: map[string]*v1alpha1.FlinkBlueGreenDeployment{},
		leases: map[string]*coordinationv1.Lease{}, notify: make(chan struct{})}
	for _, obj := range []client.Object{&v1alpha1.GitRepository{}, &v1alpha1.FlinkBlueGreenDeployment{}, &coordinationv1.Lease{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { tr.update(o, false) },
			UpdateFunc: func(_, o any) { tr.update(o, false) },
			DeleteFunc: func(o any) {
				if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				tr.update(o, true)
			},
		}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("tracker cache did not sync")
	}
	return tr, nil
}

func (tr *tracker) update(o any, deleted bool) {
	obj, ok := o.(client.Object)
	if !ok {
		return
	}
	key := obj.GetNamespace() + "/" + obj.GetName()
	tr.mu.Lock()
	switch v := o.(type) {
	case *v1alpha1.GitRepository:
		set(tr.grs, key, v, deleted)
	case *v1alpha1.FlinkBlueGreenDeployment:
		set(tr.fbgds, key, v, deleted)
	case *coordinationv1.Lease:
		set(tr.leases, key, v, deleted)
	}
	close(tr.notify)
	tr.notify = make(chan struct{})
	tr.mu.Unlock()
}

func set[T any](m map[string]*T, key string, v *T, deleted bool) {
	if deleted {
		delete(m, key)
	} else {
		m[key] = v
	}
}

// waitFor returns the time at which cond first held, evaluated after every
// watch event (under the tracker's lock: cond must only read).
func (tr *tracker) waitFor(ctx context.Context, timeout time.Duration, what string, cond func(*tracker) bool) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		tr.mu.Lock()
		ok := cond(tr)
		ch := tr.notify
		tr.mu.Unlock()
		if ok {
			return time.Now(), nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
	}
}

func (tr *tracker) gr(ns, name string) *v1alpha1.GitRepository { return tr.grs[ns+"/"+name] }

func ready(gr *v1alpha1.GitRepository) bool {
	return gr != nil && gr.Status.LastAppliedRevision != "" &&
		apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition)
}

// countReady counts Ready GitRepositories of namespace ns.
func (tr *tracker) countReady(ns string) int {
	n := 0
	for _, gr := range tr.grs {
		if gr.Namespace == ns && ready(gr) {
			n++
		}
	}
	return n
}

func appliedRev(ns, name, rev string) func(*tracker) bool {
	return func(tr *tracker) bool {
		gr := tr.gr(ns, name)
		return ready(gr) && gr.Status.LastAppliedRevision == rev
	}
}

func (tr *tracker) leaseHolder(ns, name string) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	l := tr.leases[ns+"/"+name]
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
