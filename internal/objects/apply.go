/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// apply.go: FieldManager and Apply, the server-side apply of everything
// bg-gitops writes.

package objects

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the server-side apply field manager of everything
// bg-gitops writes.
const FieldManager = "bg-gitops"

// Apply server-side applies obj as FieldManager, taking over fields that
// another manager owns (Git wins), and stores the API server's answer in
// obj. With client.DryRunAll nothing is written and obj becomes what the
// object would be. This is the one way bg-gitops issues a server-side
// apply: client.Client.Apply, which controller-runtime v0.25 prefers over
// the deprecated Patch(obj, client.Apply).
func Apply(ctx context.Context, c client.Client, obj *unstructured.Unstructured, opts ...client.ApplyOption) error {
	opts = append([]client.ApplyOption{client.ForceOwnership, client.FieldOwner(FieldManager)}, opts...)
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)
}
