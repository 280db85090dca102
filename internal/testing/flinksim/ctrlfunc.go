/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// ctrlfunc.go: ctrlFunc, a function as a reconcile.Reconciler.

package flinksim

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type ctrlFunc func(context.Context, reconcile.Request) (reconcile.Result, error)

func (f ctrlFunc) Reconcile(ctx context.Context, r reconcile.Request) (reconcile.Result, error) {
	return f(ctx, r)
}
