/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_watch.go: flinkWatch, which starts the watches on the
// children once the Flink CRDs are served, so the Flink operator may be
// installed after bg-gitops.

package reconcile

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// flinkKinds are the children of a FlinkBlueGreenDeployment, owned by the
// Flink Kubernetes Operator's CRDs.
var flinkKinds = []schema.GroupVersionKind{v1alpha1.FlinkDeploymentGVK, v1alpha1.FlinkStateSnapshotGVK}

// defaultFlinkPoll is how often a controller started without the Flink
// CRDs asks the API server whether they are served now: one GET of
// /apis/flink.apache.org/v1beta1, answered 404 until the operator is
// installed.
const defaultFlinkPoll = 10 * time.Second

func flinkCRDsInstalled(m meta.RESTMapper) bool {
	for _, gvk := range flinkKinds {
		if _, err := m.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return false
		}
	}
	return true
}

// flinkWatch starts the FlinkBlueGreenDeployment controller's watches on
// its children once the Flink CRDs are served, so that installing the Flink
// operator after bg-gitops needs no restart: until then every
// FlinkBlueGreenDeployment is Stalled (FlinkCRDMissing); when the kinds
// appear, every one is reconciled at once and the children's status
// changes wake their parent from then on, as Owns does for a controller
// started with the CRDs present.
type flinkWatch struct {
	mgr   ctrl.Manager
	ctrl  controller.Controller
	every time.Duration
}

// Start polls until the kinds are served or ctx ends.
func (w *flinkWatch) Start(ctx context.Context) error {
	t := time.NewTicker(w.every)
	defer t.Stop()
	for !flinkCRDsInstalled(w.mgr.GetRESTMapper()) {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
	w.mgr.GetLogger().Info("Flink CRDs installed: watching FlinkDeployments and FlinkStateSnapshots")
	return w.watch()
}

// NeedLeaderElection: the watches feed the controller, which runs only on
// the leader.
func (w *flinkWatch) NeedLeaderElection() bool { return true }

var _ manager.LeaderElectionRunnable = (*flinkWatch)(nil)

// watch adds what Owns(kind, MatchEveryOwner) adds (children carry a
// non-controller ownerReference), then requeues every parent.
func (w *flinkWatch) watch() error {
	for _, gvk := range flinkKinds {
		h := handler.EnqueueRequestForOwner(w.mgr.GetScheme(), w.mgr.GetRESTMapper(), &v1alpha1.FlinkBlueGreenDeployment{})
		if err := w.ctrl.Watch(source.Kind[client.Object](w.mgr.GetCache(), newUnstructured(gvk), h)); err != nil {
			return fmt.Errorf("watch %s: %w", gvk.Kind, err)
		}
	}
	return w.ctrl.Watch(source.Func(w.requeueAll))
}

// requeueAll wakes the parents stalled on the missing CRDs now rather than
// at their next minute's recheck.
func (w *flinkWatch) requeueAll(ctx context.Context, q workqueue.TypedRateLimitingInterface[crreconcile.Request]) error {
	list := &v1alpha1.FlinkBlueGreenDeploymentList{}
	if err := w.mgr.GetClient().List(ctx, list); err != nil {
		return fmt.Errorf("list FlinkBlueGreenDeployments: %w", err)
	}
	for i := range list.Items {
		q.Add(crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return nil
}
