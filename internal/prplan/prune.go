/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// prune.go: the GitRepository that applies a head, and what the controller
// would prune once it does, read from its inventory.

package prplan

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
)

// ApplyingSource is the GitRepository that applies the head: the one source
// names (namespace/name), or else the one the live objects of the head
// name in bggitops.dev/source. Nil, with the reason, when that cannot be
// told.
func ApplyingSource(ctx context.Context, c client.Reader, source string, live []*unstructured.Unstructured) (*v1alpha1.GitRepository, string, error) {
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

// Prunable reads the live objects the controller would prune once gr
// applies head: those of gr's inventory the head no longer has, still
// stamped as gr's and not kept by bggitops.dev/prune: disabled (the
// controller's own rule). They come normalized (objects.Normalize).
func Prunable(ctx context.Context, c client.Reader, gr *v1alpha1.GitRepository, head []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if gr.Status.Inventory == nil || !gr.PruneEnabled() {
		return nil, nil
	}
	kept := map[string]bool{}
	for _, obj := range head {
		kept[objects.Key(obj).String()] = true
	}
	var out []*unstructured.Unstructured
	for _, e := range gr.Status.Inventory.Entries {
		if kept[e.ID] {
			continue
		}
		live, err := readEntry(ctx, c, e)
		if err != nil {
			return nil, err
		}
		if live != nil && pruned(live, gr) {
			out = append(out, objects.Normalize(live))
		}
	}
	return out, nil
}

// readEntry reads the live object of an inventory entry; nil when it is
// gone or the entry does not parse.
func readEntry(ctx context.Context, c client.Reader, e v1alpha1.ObjectRef) (*unstructured.Unstructured, error) {
	m, err := object.ParseObjMetadata(e.ID)
	if err != nil {
		return nil, nil
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(m.GroupKind.WithVersion(e.Version))
	err = c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, live)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", e.ID, err)
	}
	return live, nil
}

// pruned reports a live object gr's prune would delete: still stamped as
// gr's, not kept by bggitops.dev/prune: disabled, not already going.
func pruned(live *unstructured.Unstructured, gr *v1alpha1.GitRepository) bool {
	ann := live.GetAnnotations()
	return ann[v1alpha1.SourceAnnotation] == gr.Namespace+"/"+gr.Name &&
		ann[v1alpha1.PruneAnnotation] != v1alpha1.PruneDisabledValue && live.GetDeletionTimestamp() == nil
}
