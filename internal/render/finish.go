/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// finish.go: Finish, what the controller does to a build before it applies
// it: a copy stamped with revision and source, in the target namespace.

package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"bggitops.dev/bg-gitops/internal/objects"
)

// Target is what Finish stamps and where it puts the objects: the
// GitRepository's revision, source value, target namespace and path.
type Target struct {
	Revision, Source, Namespace, Path string
}

// Finish is a copy of raw (a build made without a target namespace)
// stamped for t, in t's namespace (scopes from isClusterScoped). The
// controller's reconcile and `bg-gitops plan` both finish through it.
func Finish(raw []*unstructured.Unstructured, t Target, isClusterScoped func(schema.GroupVersionKind) (bool, bool)) ([]*unstructured.Unstructured, error) {
	objs := make([]*unstructured.Unstructured, len(raw))
	for i, u := range raw {
		objs[i] = u.DeepCopy()
		objects.Stamp(objs[i], t.Revision, t.Source)
	}
	if err := Namespace(objs, t.Namespace, isClusterScoped); err != nil {
		return nil, &BuildError{Path: t.Path, Err: err}
	}
	return objs, nil
}
