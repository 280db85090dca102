/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// checks.go: what the cluster says of the FlinkDeployment child the
// controller would create from each FlinkBlueGreenDeployment of a head
// (the controller's own apply check, passed in as CheckChildFunc).

package prplan

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/review"
)

// CheckChildFunc is the controller's check of the child of a
// FlinkBlueGreenDeployment (reconcile.CheckChild, which prplan may not
// import): an *apply.RejectedError when the cluster refuses it, or why
// it was not asked.
type CheckChildFunc func(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (unasked string, err error)

// ChildChecks asks the cluster through c, as the controller's apply check
// does, whether it would take the FlinkDeployment child of each
// FlinkBlueGreenDeployment of head: the refusals by object ID, and for a
// child it could not ask about (its namespace comes with the head, this
// identity may not create FlinkDeployments, asking failed), why.
func ChildChecks(ctx context.Context, check CheckChildFunc, c client.Client, head []*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, obj := range head {
		unasked, err := check(ctx, c, obj)
		id := review.Object{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}.ID()
		var refused *apply.RejectedError
		switch {
		case errors.As(err, &refused):
			out[id] = review.CheckRefused + err.Error()
		case err != nil:
			out[id] = "not checked against the cluster: " + err.Error()
		case unasked != "":
			out[id] = "not checked against the cluster: " + unasked
		}
	}
	return out
}

// SetChecks writes into each plan of r what the cluster says of its
// child: refusals by ID, or, when no cluster was asked (refusals nil),
// that it was not checked. A removed object has no child to check.
func SetChecks(r *review.Report, refusals map[string]string) {
	for i := range r.Objects {
		o := &r.Objects[i]
		if o.Deployment == nil || o.Change == review.Removed {
			continue
		}
		switch {
		case refusals == nil:
			o.Deployment.Check = review.NotChecked
		default:
			o.Deployment.Check = refusals[o.ID()]
		}
	}
}
