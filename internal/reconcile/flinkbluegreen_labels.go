/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_labels.go: the labels of the children, taken from the
// parent, and relabel, which carries a change of the parent's labels over.

package reconcile

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// childLabels are the labels of p's child of one colour: p's own, so that
// a Flink operator that watches by label selector
// (kubernetes.operator.label.selector) reconciles the children of the
// parents it is meant for, and the colour, which is the controller's and
// wins over a parent's label of that key.
func childLabels(p *v1alpha1.FlinkBlueGreenDeployment, color bluegreen.Color) map[string]string {
	out := make(map[string]string, len(p.Labels)+1)
	for k, v := range p.Labels {
		out[k] = v
	}
	out[bluegreen.TypeLabel] = string(color)
	return out
}

// relabel gives the children p's labels when p's labels changed since
// they were applied (a child is applied with them, see childObject). It
// merges in what a child lacks or carries with another value, and
// removes nothing: a label put on a child by hand stays. A child being
// deleted, an earlier object's, or one owned by nothing (adopted first, or
// refused), is left alone.
func (r *FlinkBlueGreenReconciler) relabel(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, in bluegreen.Input) error {
	for _, ch := range []*bluegreen.Child{in.Blue, in.Green} {
		if ch == nil || ch.Deleting || ch.Foreign || ch.Unowned {
			continue
		}
		missing := map[string]any{}
		for k, v := range childLabels(p, ch.Color) {
			if ch.Labels[k] != v {
				missing[k] = v
			}
		}
		if len(missing) == 0 {
			continue
		}
		if err := r.patchLabels(ctx, p, ch.Name, missing); err != nil {
			return fmt.Errorf("label %s: %w", ch.Name, err)
		}
	}
	return nil
}

func (r *FlinkBlueGreenReconciler) patchLabels(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, name string, labels map[string]any) error {
	c, err := r.actor(ctx, p)
	if err != nil {
		return err
	}
	obj := newUnstructured(v1alpha1.FlinkDeploymentGVK)
	obj.SetNamespace(p.Namespace)
	obj.SetName(name)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	err = c.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", patch))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
