/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// objects.go: finish, which turns kustomize's output into stamped,
// namespaced, checked and sorted objects, and Namespace for a build made
// without a target namespace.

package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"bggitops.dev/bg-gitops/internal/objects"
)

// finish turns kustomize's output into stamped, namespaced, checked and
// sorted objects.
func finish(m resmap.ResMap, opts Options) ([]*unstructured.Unstructured, error) {
	objs, err := toObjects(m)
	if err != nil {
		return nil, err
	}
	if opts.TargetNamespace != "" {
		setNamespace(objs, opts.TargetNamespace, scopeOf(objs, opts.IsClusterScoped))
	}
	for _, u := range objs {
		objects.Stamp(u, opts.Revision, opts.Source)
	}
	if err := checkDuplicates(objs); err != nil {
		return nil, err
	}
	objects.Sort(objs)
	return objs, nil
}

// toObjects goes through JSON so numbers become int64/float64, the only
// numeric types unstructured can deep-copy.
func toObjects(m resmap.ResMap) ([]*unstructured.Unstructured, error) {
	objs := make([]*unstructured.Unstructured, 0, m.Size())
	for _, r := range m.Resources() {
		b, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("object %s: %w", r.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// scopeOf returns a cluster-scope test that knows, in order: CRDs in the
// build, the caller's hook, then kustomize's built-in Kubernetes schema.
func scopeOf(objs []*unstructured.Unstructured, hook func(schema.GroupVersionKind) (bool, bool)) func(*unstructured.Unstructured) bool {
	crds := objects.CRDScopes(objs)
	return func(u *unstructured.Unstructured) bool {
		gvk := u.GroupVersionKind()
		if namespaced, ok := crds[gvk.GroupKind()]; ok {
			return !namespaced
		}
		if hook != nil {
			if cluster, known := hook(gvk); known {
				return cluster
			}
		}
		return openapi.IsCertainlyClusterScoped(kyaml.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()})
	}
}

// Namespace sets ns as the namespace of every namespaced object of a build
// made without a TargetNamespace (a worker's, which has no RESTMapper),
// deciding scopes as a build with it does, and checks and sorts the
// result again.
func Namespace(objs []*unstructured.Unstructured, ns string, isClusterScoped func(schema.GroupVersionKind) (bool, bool)) error {
	if ns == "" {
		return nil
	}
	// Scopes may come from kyaml's schema, which an in-process build may
	// be changing (kustomizeSlot).
	kustomizeSlot <- struct{}{}
	setNamespace(objs, ns, scopeOf(objs, isClusterScoped))
	<-kustomizeSlot
	if err := checkDuplicates(objs); err != nil {
		return err
	}
	objects.Sort(objs)
	return nil
}

func setNamespace(objs []*unstructured.Unstructured, ns string, clusterScoped func(*unstructured.Unstructured) bool) {
	for _, u := range objs {
		if !clusterScoped(u) {
			u.SetNamespace(ns)
		}
	}
}

// checkDuplicates catches identities that kustomize's own check cannot see:
// the same name in two API versions, or two namespaces merged by
// TargetNamespace.
func checkDuplicates(objs []*unstructured.Unstructured) error {
	if dups := objects.Duplicates(objs); len(dups) > 0 {
		return fmt.Errorf("%w %s", ErrDuplicateObject, objects.ID(dups[0]))
	}
	return nil
}
