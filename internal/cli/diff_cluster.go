/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops diff --cluster`: the head compared with the live objects, by a
// server-side dry-run apply.

package cli

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/review"
)

// clusterReport compares every head object with the live one: the head side
// is what a server-side apply by the controller's field manager would make
// of the live object (dry-run, nothing is written), so defaulted fields do
// not show and fields someone changed by hand (drift) do. Both sides go
// through objects.Normalize, the controller's own definition of drift, so
// an object shows exactly when the controller, applying the same commit,
// would re-apply it. Objects only in the cluster show as removed when the
// controller would prune them: they are in the inventory of the
// GitRepository that applies the head (see applyingSource, prunable); note says
// when that could not be told.
func clusterReport(ctx context.Context, f *diffFlags, head []*unstructured.Unstructured, rev review.Revision, note io.Writer) (*review.Report, error) {
	kubeconfig := f.kubeconfig
	flags := newKubeFlags()
	flags.config.KubeConfig = &kubeconfig
	cfg, err := flags.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	var gr *v1alpha1.GitRepository
	if f.source != "" {
		if gr, _, err = applyingSource(ctx, c, f.source, nil); err != nil {
			return nil, err
		}
	}
	if err := placeHead(c, head, gr); err != nil {
		return nil, err
	}
	var live, dry, raw []*unstructured.Unstructured
	for _, obj := range head {
		l, d, err := dryRunApply(ctx, c, obj)
		if err != nil {
			return nil, err
		}
		if l != nil {
			raw = append(raw, l.DeepCopy())
			live = append(live, objects.Normalize(l))
		}
		dry = append(dry, objects.Normalize(d))
	}
	why := ""
	if gr == nil {
		if gr, why, err = applyingSource(ctx, c, "", raw); err != nil {
			return nil, err
		}
	}
	if gr == nil {
		fmt.Fprintf(note, "note: %s: what it would prune is not shown\n", why)
	} else {
		gone, err := prunable(ctx, c, gr, head)
		if err != nil {
			return nil, err
		}
		live = append(live, gone...)
	}
	r, err := review.Compare(live, dry)
	if err != nil {
		return nil, err
	}
	setChecks(r, childRefusals(ctx, c, head))
	r.Base = review.Revision{Ref: "cluster"}
	r.Head = rev
	return r, nil
}

// placeHead puts the namespaced objects of head in the target namespace of
// gr, the GitRepository that applies them, as the controller does
// (render.Namespace); without gr, one with no namespace cannot be compared.
func placeHead(c client.Client, head []*unstructured.Unstructured, gr *v1alpha1.GitRepository) error {
	scoped := func(gvk schema.GroupVersionKind) (bool, bool) {
		namespaced, err := objects.Namespaced(c.RESTMapper(), gvk)
		return !namespaced, err == nil
	}
	why := "the GitRepository that applies --path gives it its spec.targetNamespace; name that GitRepository with --source NAMESPACE/NAME"
	if gr != nil {
		if err := render.Namespace(head, gr.Spec.TargetNamespace, scoped); err != nil {
			return err
		}
		why = "the controller refuses to apply it (set spec.targetNamespace of gitrepository " + gr.Namespace + "/" + gr.Name + " or metadata.namespace)"
	}
	for _, obj := range head {
		if cluster, known := scoped(obj.GroupVersionKind()); obj.GetNamespace() == "" && known && !cluster {
			return fmt.Errorf("%s has no namespace: %s", objects.ID(obj), why)
		}
	}
	return nil
}

// dryRunApply returns the live object (nil when absent) and the dry-run
// result of applying obj. An object whose namespace does not exist yet is
// new: the rendered object stands for the dry-run result.
func dryRunApply(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (live, dry *unstructured.Unstructured, err error) {
	live = &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("read %s: %w", objects.ID(obj), err)
		}
		live = nil
	}
	dry = obj.DeepCopy()
	err = objects.Apply(ctx, c, dry, client.DryRunAll)
	switch {
	case err == nil:
		return live, dry, nil
	case live == nil && apierrors.IsNotFound(err):
		return nil, obj.DeepCopy(), nil
	}
	return nil, nil, fmt.Errorf("dry-run apply %s: %w", objects.ID(obj), err)
}
