/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_source.go: the GitRepository that applied a
// FlinkBlueGreenDeployment (verifiedSource) and the client with its identity
// that writes the children (actor).

package reconcile

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// verifiedSource returns the GitRepository that applied p: the one its
// bggitops.dev/source annotation names, when that GitRepository is in p's
// namespace or lists p in its inventory. A GitRepository of another
// namespace that did not apply p (an annotation written by hand) is
// ignored: nil, no error.
func verifiedSource(ctx context.Context, cached, live client.Reader, p *v1alpha1.FlinkBlueGreenDeployment) (*v1alpha1.GitRepository, error) {
	gr, err := sourceRepository(ctx, cached, live, p)
	if err != nil || gr == nil {
		return nil, err
	}
	if gr.Namespace != p.Namespace && !inInventory(gr, p) {
		return nil, nil
	}
	return gr, nil
}

// actor returns the client that writes p's children and snapshots: the
// identity that applied p (its GitRepository's ServiceAccount, or the
// default one), so that a FlinkBlueGreenDeployment cannot make the
// controller create what its author may not. Without an Impersonate
// function, or with no ServiceAccount to use, it is the controller's own
// client.
func (r *FlinkBlueGreenReconciler) actor(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment) (client.Client, error) {
	if r.Impersonate == nil {
		return r.Client, nil
	}
	gr, err := verifiedSource(ctx, r.Client, r.APIReader, p)
	if err != nil {
		return nil, err
	}
	ns, sa := p.Namespace, r.Tenancy.DefaultServiceAccount
	if gr != nil {
		if sa, err = r.Tenancy.serviceAccount(gr); err != nil {
			return nil, err
		}
		ns = gr.Namespace
	}
	if sa == "" {
		if r.Tenancy.RequireServiceAccount {
			return nil, fmt.Errorf("no ServiceAccount to create the FlinkDeployments of %s/%s with (--require-service-account): apply it from a GitRepository with spec.serviceAccountName", p.Namespace, p.Name)
		}
		return r.Client, nil
	}
	return r.Impersonate(ns, sa)
}
