/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// stale.go: detecting a reconcile that read a stale object from the cache,
// and answering it with a quick retry.

package reconcile

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// staleRetry is how soon a reconcile that read a stale object runs again:
// the cache is behind the API server by a watch event, milliseconds.
const staleRetry = 200 * time.Millisecond

// errStaleRead: the object read from the cache is older than the API
// server's; nothing that depends on its status may be done.
var errStaleRead = errors.New("the object read from the cache is stale")

// stale reports whether err says the reconcile worked from a stale read:
// a status write refused by its optimistic lock, or the reporter's check.
func stale(err error) bool {
	return errors.Is(err, errStaleRead) || apierrors.IsConflict(err)
}

// staleRead is the answer to a reconcile that read a stale object: run
// again soon, with nothing written, reported or logged above debug level.
func staleRead(ctx context.Context) (ctrl.Result, error) {
	logf.FromContext(ctx).V(1).Info("stale read: the status changed since the cache was filled; reconciling again", "requeueAfter", staleRetry)
	return ctrl.Result{RequeueAfter: staleRetry}, nil
}

// fresh reports whether obj, read from the cache, is the API server's
// latest version (same resourceVersion); reader reads the API server.
func fresh(ctx context.Context, reader client.Reader, obj client.Object) (bool, error) {
	if reader == nil {
		return true, nil
	}
	live := obj.DeepCopyObject().(client.Object)
	if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return false, err
	}
	return live.GetResourceVersion() == obj.GetResourceVersion(), nil
}
