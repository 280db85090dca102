/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// diff_checks.go: `bg-gitops diff --cluster` and `bg-gitops plan`: what the cluster says of
// the FlinkDeployment child the controller would create (the controller's
// own apply check, reconcile.CheckChild).

package cli

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/review"
)

// childRefusals: prplan.ChildChecks with the controller's check.
func childRefusals(ctx context.Context, c client.Client, head []*unstructured.Unstructured) map[string]string {
	return prplan.ChildChecks(ctx, reconcile.CheckChild, c, head)
}

// setChecks: prplan.SetChecks.
func setChecks(r *review.Report, refusals map[string]string) { prplan.SetChecks(r, refusals) }
