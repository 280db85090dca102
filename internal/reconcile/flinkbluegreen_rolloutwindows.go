/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_rolloutwindows.go: the watch that wakes the
// FlinkBlueGreenDeployments of a GitRepository whose rolloutWindows changed.

package reconcile

import (
	"context"
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// deploymentsOfSource maps a GitRepository to the FlinkBlueGreenDeployments
// it applied (from its inventory), so that a change of its rolloutWindows
// wakes a transition waiting for a window at once.
func deploymentsOfSource(_ context.Context, obj client.Object) []reconcile.Request {
	gr, ok := obj.(*v1alpha1.GitRepository)
	if !ok || gr.Status.Inventory == nil {
		return nil
	}
	var out []reconcile.Request
	for _, e := range gr.Status.Inventory.Entries {
		id, err := object.ParseObjMetadata(e.ID)
		if err != nil || id.GroupKind.Group != v1alpha1.GroupVersion.Group || id.GroupKind.Kind != v1alpha1.FlinkBlueGreenDeploymentKind {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: id.Namespace, Name: id.Name}})
	}
	return out
}

// sourceRepository reads the GitRepository that applied obj; nil when obj
// names none or it does not exist. The cache answers first. A controller
// sharded with --watch-label-selector caches only the GitRepositories of
// its shard, and the one that applied obj may carry other labels (the
// labels in Git and those on the GitRepository are set apart), so a miss is
// confirmed with the API server (live, when not nil): a rollout window or
// a commit status must not be skipped because of a label.
func sourceRepository(ctx context.Context, cached, live client.Reader, obj client.Object) (*v1alpha1.GitRepository, error) {
	src, ok := v1alpha1.AppliedBy(obj)
	if !ok {
		return nil, nil
	}
	gr := &v1alpha1.GitRepository{}
	err := cached.Get(ctx, src, gr)
	if apierrors.IsNotFound(err) && live != nil {
		err = live.Get(ctx, src, gr)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read GitRepository %s: %w", src, err)
	}
	return gr, nil
}

// windowsChanged passes GitRepository updates that change rolloutWindows.
var windowsChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*v1alpha1.GitRepository)
		n, ok2 := e.ObjectNew.(*v1alpha1.GitRepository)
		return ok1 && ok2 && !equalWindows(o.Spec.RolloutWindows, n.Spec.RolloutWindows)
	},
}

func equalWindows(a, b []v1alpha1.RolloutWindow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
