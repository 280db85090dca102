/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_overridden.go: overridden, the fields of a child's spec that
// another field manager set after bg-gitops applied it, read from managed
// fields.

package reconcile

import (
	"encoding/json"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/internal/objects"
)

// overridden lists the fields of a child's spec that bg-gitops's
// server-side apply does not own: set after bg-gitops applied the child,
// by an HPA or `kubectl scale` through the scale subresource (whose
// writes own nothing on a custom resource), or by a `kubectl edit`
// (which takes the field over). Decide classifies a rollout from what Git
// set, so it reads these as the template has them
// (bluegreen.Child.Overridden). A child bg-gitops never applied (created
// by hand, then adopted) has nothing overridden: all of it is compared.
func overridden(spec any, entries []metav1.ManagedFieldsEntry) []string {
	ours := map[string]bool{}
	for _, e := range entries {
		if e.Manager != objects.FieldManager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var set map[string]any
		if json.Unmarshal(e.FieldsV1.Raw, &set) == nil {
			owned, _ := set["f:spec"].(map[string]any)
			ownedPaths(owned, "", ours)
		}
	}
	if len(ours) == 0 {
		return nil
	}
	live := map[string]bool{}
	leafPaths(spec, "", live)
	var out []string
	for p := range live {
		if !ours[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// ownedPaths adds the dotted path of every field a managed-fields set
// names under prefix. A list counts as one field, as in leafPaths.
func ownedPaths(set map[string]any, prefix string, into map[string]bool) {
	for k, v := range set {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue // ".", or a list item ("k:", "v:", "i:")
		}
		p := join(prefix, name)
		if sub, _ := v.(map[string]any); hasFields(sub) {
			ownedPaths(sub, p, into)
		} else {
			into[p] = true
		}
	}
}

// leafPaths adds the dotted path of every field of an object's value
// under prefix; a list is one field.
func leafPaths(v any, prefix string, into map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok {
		if prefix != "" {
			into[prefix] = true
		}
		return
	}
	for k, sub := range m {
		leafPaths(sub, join(prefix, k), into)
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func hasFields(set map[string]any) bool {
	for k := range set {
		if strings.HasPrefix(k, "f:") {
			return true
		}
	}
	return false
}
