/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/diff"
	"bggitops.dev/bg-gitops/internal/reconcile/apply"
)

// clusterReport compares every head object with the live one: the head side
// is what a server-side apply by the controller's field manager would make
// of the live object (dry-run, nothing is written), so defaulted fields do
// not show and fields someone changed by hand (drift) do. Objects only in
// the cluster are not reported: which of them the controller prunes
// depends on a GitRepository's inventory, not on the repository.
func clusterReport(ctx context.Context, kubeconfig string, head []*unstructured.Unstructured, rev diff.Revision) (*diff.Report, error) {
	cfg, err := clientConfig(kubeconfig).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	var live, dry []*unstructured.Unstructured
	for _, obj := range head {
		l, d, err := dryRunApply(ctx, c, obj)
		if err != nil {
			return nil, err
		}
		if l != nil {
			live = append(live, comparable(l))
		}
		dry = append(dry, comparable(d))
	}
	r, err := diff.Compare(live, dry)
	if err != nil {
		return nil, err
	}
	r.Base = diff.Revision{Ref: "cluster"}
	r.Head = rev
	return r, nil
}

// dryRunApply returns the live object (nil when absent) and the dry-run
// result of applying obj. An object whose namespace does not exist yet is
// new: the rendered object stands for the dry-run result.
func dryRunApply(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (live, dry *unstructured.Unstructured, err error) {
	live = &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("read %s: %w", id(obj), err)
		}
		live = nil
	}
	dry = obj.DeepCopy()
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry),
		client.DryRunAll, client.ForceOwnership, client.FieldOwner(apply.FieldManager))
	switch {
	case err == nil:
		return live, dry, nil
	case live == nil && apierrors.IsNotFound(err):
		return nil, obj.DeepCopy(), nil
	}
	return nil, nil, fmt.Errorf("dry-run apply %s: %w", id(obj), err)
}

// serverFields are written by the API server or the controller, never by
// Git.
var serverFields = [][]string{
	{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "uid"},
	{"metadata", "creationTimestamp"}, {"metadata", "generation"}, {"metadata", "selfLink"},
	{"status"},
}

// stampAnnotations are set by the controller when it applies, not in Git.
var stampAnnotations = []string{v1alpha1.RevisionAnnotation, v1alpha1.SourceAnnotation}

func comparable(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	for _, f := range serverFields {
		unstructured.RemoveNestedField(c.Object, f...)
	}
	if a := c.GetAnnotations(); a != nil {
		for _, k := range stampAnnotations {
			delete(a, k)
		}
		c.SetAnnotations(a)
	}
	if len(c.GetAnnotations()) == 0 {
		unstructured.RemoveNestedField(c.Object, "metadata", "annotations")
	}
	return c
}

func id(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}
