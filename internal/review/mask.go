/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// mask.go: masking Secret values in the objects a report shows (mask, Mask).

package review

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Masks of Secret values: no hash either, a hash of a short password can be
// brute-forced.
const (
	maskValue   = "***"
	maskChanged = "*** (changed)"
)

// secretFields hold Secret values.
var secretFields = []string{"data", "stringData"}

// secretAnnotations can carry a copy of a Secret's values.
var secretAnnotations = []string{"kubectl.kubernetes.io/last-applied-configuration"}

// mask returns copies of base and head with every Secret value replaced:
// "***" where it is the same on both sides (or on one side only), and
// "*** (changed)" on the head side where it differs. Other kinds are
// returned as they are.
func mask(base, head *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	if !isSecret(either(base, head)) {
		return base, head
	}
	b, h := copyOf(base), copyOf(head)
	for _, f := range secretFields {
		bv := stringMap(b, f)
		hv := stringMap(h, f)
		maskMap(b, f, bv, nil)
		maskMap(h, f, hv, bv)
	}
	maskAnnotations(b)
	maskAnnotations(h)
	return b, h
}

// Mask masks the values of a single Secret (for added or removed objects
// shown whole); other objects are returned unchanged.
func Mask(u *unstructured.Unstructured) *unstructured.Unstructured {
	m, _ := mask(u, nil)
	return m
}

func isSecret(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

func copyOf(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	return u.DeepCopy()
}

// stringMap reads a map field whatever its value types (a malformed Secret
// still gets masked).
func stringMap(u *unstructured.Unstructured, field string) map[string]any {
	if u == nil {
		return nil
	}
	m, _, _ := unstructured.NestedFieldNoCopy(u.Object, field)
	mm, _ := m.(map[string]any)
	return mm
}

// maskMap replaces every value of field; a value differing from other's
// becomes "*** (changed)".
func maskMap(u *unstructured.Unstructured, field string, values, other map[string]any) {
	if u == nil {
		return
	}
	if _, found := u.Object[field]; found && values == nil {
		u.Object[field] = maskValue
		return
	}
	if values == nil {
		return
	}
	masked := make(map[string]any, len(values))
	for k, v := range values {
		masked[k] = maskValue
		if ov, ok := other[k]; other != nil && ok && !reflect.DeepEqual(ov, v) {
			masked[k] = maskChanged
		}
	}
	u.Object[field] = masked
}

func maskAnnotations(u *unstructured.Unstructured) {
	if u == nil {
		return
	}
	a := u.GetAnnotations()
	changed := false
	for _, k := range secretAnnotations {
		if _, ok := a[k]; ok {
			a[k] = maskValue
			changed = true
		}
	}
	if changed {
		u.SetAnnotations(a)
	}
}
