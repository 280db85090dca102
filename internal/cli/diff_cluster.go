/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops diff --cluster`: the head compared with the live objects, by a
// server-side dry-run apply (prplan.Compare, the pull-request plan's own
// comparison).

package cli

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/review"
)

// clusterReport compares every head object with the live one
// (prplan.Compare) as the user's own identity; note says when what the
// controller would prune could not be told. An object the dry-run refuses
// is an error here: diff has no outcome to fail.
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
		if gr, _, err = prplan.ApplyingSource(ctx, c, f.source, nil); err != nil {
			return nil, err
		}
	}
	if err := prplan.PlaceHead(c, head, gr); err != nil {
		return nil, err
	}
	live, err := prplan.Compare(ctx, c, c, head, gr)
	if err != nil {
		return nil, err
	}
	if len(live.Refused) > 0 {
		return nil, fmt.Errorf("dry-run apply %s: %s", live.Refused[0].Object, live.Refused[0].Reason)
	}
	if live.Source == nil {
		fmt.Fprintf(note, "note: %s: what it would prune is not shown\n", live.Why)
	}
	r := live.Report
	setChecks(r, childRefusals(ctx, c, head))
	r.Head = rev
	return r, nil
}
