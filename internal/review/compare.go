/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// compare.go: Compare, which matches the objects of base and head by
// objects.Key and reports what changes.

package review

import (
	"cmp"
	"fmt"
	"sort"

	"github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/objects"
)

// Compare reports what changes from base to head. Objects are matched by
// group, kind, namespace and name (a version bump of the same object is a
// change, not a removal and an addition). The caller fills in Path, Base
// and Head.
func Compare(base, head []*unstructured.Unstructured) (*Report, error) {
	b, err := index(base, "base")
	if err != nil {
		return nil, err
	}
	h, err := index(head, "head")
	if err != nil {
		return nil, err
	}
	r := &Report{SchemaVersion: SchemaVersion, Objects: []Object{}}
	removed, added := map[string][]string{}, map[int]*unstructured.Unstructured{}
	for _, k := range keys(b, h) {
		o, changed, err := compareOne(b[k], h[k])
		if err != nil {
			return nil, err
		}
		if !changed {
			continue
		}
		if o.Deployment != nil && o.Change == Added {
			added[len(r.Objects)] = h[k]
		}
		if o.Deployment != nil && o.Change == Removed && statefulFBGD(b[k]) {
			removed[b[k].GetNamespace()] = append(removed[b[k].GetNamespace()], b[k].GetName())
		}
		r.Objects = append(r.Objects, o)
		r.Summary.count(o.Change)
	}
	renames(r, removed, added)
	return r, nil
}

func (s *Summary) count(c Change) {
	switch c {
	case Added:
		s.Added++
	case Changed:
		s.Changed++
	case Removed:
		s.Removed++
	}
}

// compareOne compares one object present in base, head or both.
func compareOne(base, head *unstructured.Unstructured) (Object, bool, error) {
	o := describe(base, head)
	switch {
	case base == nil:
		o.Change = Added
	case head == nil:
		o.Change = Removed
	case equality.Semantic.DeepEqual(base.Object, head.Object):
		return o, false, nil
	default:
		o.Change = Changed
		d, err := yamlDiff(mask(base, head))
		if err != nil {
			return o, false, fmt.Errorf("%s: %w", o.ID(), err)
		}
		o.Diff = d
	}
	if isFBGD(either(base, head)) {
		p, err := plan(base, head)
		if err != nil {
			return o, false, err
		}
		o.Deployment = p
	}
	return o, true, nil
}

func describe(base, head *unstructured.Unstructured) Object {
	u := either(base, head)
	return Object{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

func either(base, head *unstructured.Unstructured) *unstructured.Unstructured {
	if head != nil {
		return head
	}
	return base
}

// key identifies an object across both sides: objects.Key, the identity
// the applier uses.
type key = object.ObjMetadata

func keyOf(u *unstructured.Unstructured) key { return objects.Key(u) }

func index(objs []*unstructured.Unstructured, side string) (map[key]*unstructured.Unstructured, error) {
	if dups := objects.Duplicates(objs); len(dups) > 0 {
		return nil, fmt.Errorf("%s: %s appears twice", side, objects.ID(dups[0]))
	}
	m := make(map[key]*unstructured.Unstructured, len(objs))
	for _, u := range objs {
		m[keyOf(u)] = u
	}
	return m, nil
}

// keys lists the keys of both sides once, by kind, group, namespace, name.
func keys(a, b map[key]*unstructured.Unstructured) []key {
	seen := map[key]bool{}
	var out []key
	for _, m := range []map[key]*unstructured.Unstructured{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		return cmp.Or(cmp.Compare(x.GroupKind.Kind, y.GroupKind.Kind), cmp.Compare(x.GroupKind.Group, y.GroupKind.Group),
			cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name)) < 0
	})
	return out
}

func statefulFBGD(u *unstructured.Unstructured) bool {
	p, err := fbgdOf(u)
	return err == nil && p.Spec.Template.Spec.Stateful()
}
