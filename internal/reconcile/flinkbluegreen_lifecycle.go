/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_lifecycle.go: the final-savepoint finalizer, and reading the
// state records a first job starts from (Records, observeRecord).

package reconcile

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// The state lifecycle's Kubernetes side (see bluegreen.RecordOf): the
// finalizer that makes a deletion savepoint first, and the records that
// deletion keeps.

// ensureFinalizer adds the final-savepoint finalizer to p (one write, at
// its first reconcile), with an optimistic lock.
func (r *FlinkBlueGreenReconciler) ensureFinalizer(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment) error {
	if controllerutil.ContainsFinalizer(p, v1alpha1.FinalSavepointFinalizer) {
		return nil
	}
	base := p.DeepCopy()
	controllerutil.AddFinalizer(p, v1alpha1.FinalSavepointFinalizer)
	return r.Client.Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// removeFinalizer lets the deletion of p complete.
func (r *FlinkBlueGreenReconciler) removeFinalizer(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment) error {
	base := p.DeepCopy()
	if !controllerutil.RemoveFinalizer(p, v1alpha1.FinalSavepointFinalizer) {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

// abandonFinalizer ends a deletion whose actions keep failing past its
// deadline (see bluegreen.DeletionOverdue): the children, which p owns,
// are left to the garbage collector.
func (r *FlinkBlueGreenReconciler) abandonFinalizer(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, cause error) error {
	msg := r.Redact.ForNamespace(p.Namespace).Scrub(cause.Error())
	r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, "DeletionForced", "Finalize",
		"the deletion could not savepoint or delete the children past bggitops.dev/savepoint-timeout (%s): the finalizer is removed and the garbage collector deletes the children", msg)
	return r.removeFinalizer(ctx, p)
}

// beforeFirstJob reports a p whose first job has not been started: only
// then is its state record looked up.
func beforeFirstJob(p *v1alpha1.FlinkBlueGreenDeployment) bool {
	s := p.Status.BlueGreenState
	return p.DeletionTimestamp.IsZero() && (s == "" || s == v1alpha1.InitializingBlue)
}

// observeRecord fills in.Record, the newest state record of
// bluegreen.RecordOf(p) (nil when there is none), and whether the object
// restore-from names still exists; only before p's first job.
func observeRecord(ctx context.Context, c client.Reader, p *v1alpha1.FlinkBlueGreenDeployment, in *bluegreen.Input) error {
	of := bluegreen.RecordOf(p)
	if !beforeFirstJob(p) || len(validation.IsValidLabelValue(of)) > 0 {
		return nil
	}
	if of != p.Name {
		err := c.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: of}, &v1alpha1.FlinkBlueGreenDeployment{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		in.RestoreSourceLive = err == nil
	}
	var err error
	in.Record, err = newestRecord(ctx, c, p.Namespace, of)
	if in.Record != nil {
		// The name is free of the object the record is of.
		in.Record.Final = !in.RestoreSourceLive
	}
	return err
}

// newestRecord is the newest state record of the name of in ns.
func newestRecord(ctx context.Context, c client.Reader, ns, of string) (*bluegreen.Record, error) {
	recs, err := Records(ctx, c, ns, of)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return recs[0], nil
}

// Records are the state records of the FlinkBlueGreenDeployment named of
// in ns, newest first (by creation, then name).
func Records(ctx context.Context, c client.Reader, ns, of string) ([]*bluegreen.Record, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK.GroupVersion().WithKind("FlinkStateSnapshotList"))
	if err := c.List(ctx, list, client.InNamespace(ns),
		client.MatchingLabels{v1alpha1.FlinkBlueGreenDeploymentLabel: of, v1alpha1.StateRecordLabel: "true"}); err != nil {
		return nil, err
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool {
		ti, tj := items[i].GetCreationTimestamp(), items[j].GetCreationTimestamp()
		if !ti.Equal(&tj) {
			return tj.Before(&ti)
		}
		return items[i].GetName() > items[j].GetName()
	})
	recs := make([]*bluegreen.Record, 0, len(items))
	for i := range items {
		recs = append(recs, recordFrom(&items[i], of))
	}
	return recs, nil
}

func recordFrom(u *unstructured.Unstructured, of string) *bluegreen.Record {
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	existing, _, _ := unstructured.NestedBool(u.Object, "spec", "savepoint", "alreadyExists")
	a := u.GetAnnotations()
	rec := &bluegreen.Record{Name: u.GetName(), Of: of, State: str("status", "state"), Path: str("status", "path"),
		Existing: existing, LastCompleted: a[v1alpha1.LastCompletedSavepointAnnotation], Error: str("status", "error"),
		Job: a[v1alpha1.JobAnnotation], Revision: a[v1alpha1.RevisionAnnotation], Created: u.GetCreationTimestamp().Time}
	if existing {
		rec.Path = str("spec", "savepoint", "path")
	}
	return rec
}

// recordOwner wakes the FlinkBlueGreenDeployment a state record is of: the
// one being deleted that waits for it, or a new one of that name.
func recordOwner(_ context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[v1alpha1.StateRecordLabel] != "true" || l[v1alpha1.FlinkBlueGreenDeploymentLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: l[v1alpha1.FlinkBlueGreenDeploymentLabel]}}}
}
