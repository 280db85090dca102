/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops diff --cluster`: what the controller would prune at the head,
// read from the inventory of the GitRepository that applies the path.

package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/reconcile/apply"
	"bggitops.dev/bg-gitops/internal/review"
)

// applyingSource is the GitRepository that applies the head: the one source
// names (namespace/name), or else the one the live objects of the head
// name in bggitops.dev/source. Nil, with the reason, when that cannot be
// told.
func applyingSource(ctx context.Context, c client.Client, source string, live []*unstructured.Unstructured) (*v1alpha1.GitRepository, string, error) {
	named := source != ""
	if !named {
		found := map[string]bool{}
		for _, l := range live {
			if s := l.GetAnnotations()[v1alpha1.SourceAnnotation]; s != "" {
				found[s] = true
			}
		}
		if len(found) != 1 {
			return nil, fmt.Sprintf("the live objects name %d GitRepositories (name the one that applies the path with --source)", len(found)), nil
		}
		for s := range found {
			source = s
		}
	}
	ns, name, ok := strings.Cut(source, "/")
	if !ok {
		return nil, "", fmt.Errorf("--source %q: want NAMESPACE/NAME", source)
	}
	gr := &v1alpha1.GitRepository{}
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, gr)
	switch {
	case err == nil:
		return gr, "", nil
	case !named && apierrors.IsNotFound(err):
		return nil, "gitrepository " + source + ", which the live objects name, does not exist", nil
	}
	return nil, "", fmt.Errorf("gitrepository %s: %w", source, err)
}

// prunable reads the live objects the controller would prune once gr
// applies head: those of gr's inventory the head no longer has, still
// stamped as gr's and not kept by bggitops.dev/prune: disabled (the
// controller's own rule).
func prunable(ctx context.Context, c client.Client, gr *v1alpha1.GitRepository, head []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if gr.Status.Inventory == nil || !gr.PruneEnabled() {
		return nil, nil
	}
	kept := map[string]bool{}
	for _, obj := range head {
		kept[objects.Key(obj).String()] = true
	}
	source := gr.Namespace + "/" + gr.Name
	var out []*unstructured.Unstructured
	for _, e := range gr.Status.Inventory.Entries {
		if kept[e.ID] {
			continue
		}
		m, err := object.ParseObjMetadata(e.ID)
		if err != nil {
			continue
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(m.GroupKind.WithVersion(e.Version))
		err = c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, live)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", e.ID, err)
		}
		ann := live.GetAnnotations()
		if ann[v1alpha1.SourceAnnotation] == source && ann[v1alpha1.PruneAnnotation] != v1alpha1.PruneDisabledValue && live.GetDeletionTimestamp() == nil {
			out = append(out, objects.Normalize(live))
		}
	}
	return out, nil
}

// notChecked is the Check of a plan no cluster was asked about.
const notChecked = "not checked against a cluster"

// childRefusals asks the cluster, as the controller's apply check does,
// whether it would take the FlinkDeployment child of each
// FlinkBlueGreenDeployment of head: the refusals by object ID, and for a
// child it could not ask about (its namespace comes with the head, this
// identity may not create FlinkDeployments, asking failed), why.
func childRefusals(ctx context.Context, c client.Client, head []*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, obj := range head {
		unasked, err := reconcile.CheckChild(ctx, c, obj)
		id := review.Object{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}.ID()
		var refused *apply.RejectedError
		switch {
		case errors.As(err, &refused):
			out[id] = "will be refused: " + err.Error()
		case err != nil:
			out[id] = "not checked against the cluster: " + err.Error()
		case unasked != "":
			out[id] = "not checked against the cluster: " + unasked
		}
	}
	return out
}

// setChecks writes into each plan of r what the cluster says of its
// child: refusals by ID, or, when no cluster was asked (refusals nil),
// that it was not checked. A removed object has no child to check.
func setChecks(r *review.Report, refusals map[string]string) {
	for i := range r.Objects {
		o := &r.Objects[i]
		if o.Deployment == nil || o.Change == review.Removed {
			continue
		}
		switch {
		case refusals == nil:
			o.Deployment.Check = notChecked
		default:
			o.Deployment.Check = refusals[o.ID()]
		}
	}
}
