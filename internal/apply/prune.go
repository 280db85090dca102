/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// prune.go: pruning the stale inventory entries that carry our source
// annotation, in reverse apply order.

package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
)

// prune deletes the stale inventory entries that carry our source
// annotation and no opt-out, in reverse apply order (Namespaces last).
// Entries that could not be checked or deleted are kept in r.unpruned so
// the next Apply retries them.
func (r *run) prune(ctx context.Context, refs []v1alpha1.ObjectRef, source string) ([]Change, error) {
	metas := make([]object.ObjMetadata, 0, len(refs))
	versions := map[object.ObjMetadata]v1alpha1.ObjectRef{}
	var errs []error
	for _, e := range refs {
		m, err := object.ParseObjMetadata(e.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("inventory entry %q: %w", e.ID, err))
			continue
		}
		metas = append(metas, m)
		versions[m] = e
	}
	sort.SliceStable(metas, func(i, j int) bool { return objects.Less(metas[j], metas[i]) })
	var changes []Change
	for _, m := range metas {
		action, err := r.pruneOne(ctx, m, versions[m].Version, source)
		if err != nil {
			errs = append(errs, &ObjectError{ID: objects.KeyID(m), Err: err})
			r.unpruned = append(r.unpruned, versions[m])
			continue
		}
		if action != "" {
			changes = append(changes, Change{ID: objects.KeyID(m), Action: action})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return changes, fmt.Errorf("prune: %w", err)
	}
	return changes, nil
}

// pruneOne deletes one object if it is ours. It returns "" when nothing is
// to be reported: the object is gone already or belongs to someone else.
func (r *run) pruneOne(ctx context.Context, m object.ObjMetadata, version, source string) (string, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(m.GroupKind.WithVersion(version))
	err := r.c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		r.memo.forget(r.user, objects.KeyID(m))
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read: %w", err)
	}
	ann := obj.GetAnnotations()
	if ann[v1alpha1.SourceAnnotation] != source || obj.GetDeletionTimestamp() != nil {
		return "", nil
	}
	if ann[v1alpha1.PruneAnnotation] == v1alpha1.PruneDisabledValue {
		return ActionPruneSkipped, nil
	}
	// The preconditions make sure that what is deleted is what was checked.
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err = r.c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid, ResourceVersion: &rv})
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("delete: %w", err)
	}
	r.memo.forget(r.user, objects.KeyID(m))
	return ActionPruned, nil
}

// left reports the stale entries that an Apply without Prune leaves in the
// cluster, as the per-object opt-out is reported: they are no longer in the
// inventory, and the event of the apply says so.
func left(refs []v1alpha1.ObjectRef) []Change {
	var out []Change
	for _, e := range refs {
		if m, err := object.ParseObjMetadata(e.ID); err == nil {
			out = append(out, Change{ID: objects.KeyID(m), Action: ActionPruneSkipped})
		}
	}
	return out
}
