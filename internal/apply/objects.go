/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// objects.go: prepare, which copies and validates the objects of a set
// (known kind, namespace, no repeated identity), stamps their source and puts
// them in apply order.

package apply

import (
	"errors"
	"fmt"
	"sort"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"bggitops.dev/bg-gitops/internal/objects"
)

// item is one object of the set, validated and normalised.
type item struct {
	obj  *unstructured.Unstructured
	meta object.ObjMetadata
	// id is Kind/namespace/name, the name used in changes and errors.
	id         string
	namespaced bool
	hash       string // see desiredHash
}

// prepare copies and validates objects: each is a Kubernetes object of a
// known (or same-set CRD) kind, namespaced kinds have a namespace,
// cluster-scoped ones lose a stray namespace, and no identity repeats. It
// stamps the source annotation where it is missing and returns the set in
// apply order. A confined set holds only objects of its own namespace.
func (a *Applier) prepare(objs []*unstructured.Unstructured, o Options) ([]*item, error) {
	scopes := objects.CRDScopes(objs)
	var errs []error
	set := make([]*item, 0, len(objs))
	for i, in := range objs {
		it, err := a.newItem(in, scopes)
		if err == nil {
			err = confine(it, o)
		}
		if err != nil {
			errs = append(errs, objectError(i, in, err))
			continue
		}
		objects.Stamp(it.obj, "", o.Source)
		set = append(set, it)
	}
	errs = append(errs, duplicates(set)...)
	if err := joinObjectErrors(errs); err != nil {
		return nil, fmt.Errorf("invalid object set: %w", err)
	}
	sort.SliceStable(set, func(i, j int) bool { return objects.Less(set[i].meta, set[j].meta) })
	return set, nil
}

func objectError(i int, obj *unstructured.Unstructured, err error) error {
	if obj == nil || obj.GetKind() == "" || obj.GetName() == "" {
		return &ObjectError{ID: fmt.Sprintf("object #%d", i+1), Err: err}
	}
	return &ObjectError{ID: objects.ID(obj), Err: err}
}

func (a *Applier) newItem(in *unstructured.Unstructured, scopes map[schema.GroupKind]bool) (*item, error) {
	if in == nil || !utils.IsKubernetesObject(in) {
		return nil, errors.New("apiVersion, kind and metadata.name are required")
	}
	obj := in.DeepCopy()
	gvk := obj.GroupVersionKind()
	// The cluster decides the scope of a kind it serves; a CRD of the set
	// only for a kind it does not serve yet. A CRD in the set that
	// redeclares a served kind (ClusterRoleBinding as Namespaced) must not
	// make a cluster-scoped object look namespaced.
	namespaced, err := objects.Namespaced(a.mapper, gvk)
	if err != nil {
		var ok bool
		if namespaced, ok = scopes[gvk.GroupKind()]; !ok {
			return nil, fmt.Errorf("unknown kind %s: %w", gvk, err)
		}
	}
	switch {
	case !namespaced:
		obj.SetNamespace("")
	case obj.GetNamespace() == "":
		return nil, errors.New("namespace not set (set targetNamespace or metadata.namespace)")
	}
	return &item{
		obj:        obj,
		meta:       objects.Key(obj),
		id:         objects.ID(obj),
		namespaced: namespaced,
	}, nil
}

// duplicates reports every identity (group, kind, namespace, name) that
// appears more than once; the API server would apply both and keep one.
func duplicates(set []*item) []error {
	objs := make([]*unstructured.Unstructured, len(set))
	for i, it := range set {
		objs[i] = it.obj
	}
	var errs []error
	for _, u := range objects.Duplicates(objs) {
		errs = append(errs, &ObjectError{ID: objects.ID(u), Err: errors.New("defined more than once in the set")})
	}
	return errs
}
