/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// group.go: the all-or-nothing-per-namespace rule — PartialError and the
// helpers that drop refused namespaces from a set and its inventory.

package apply

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/object"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// PartialError: the objects of Namespaces were refused, so none of those
// namespaces' objects was applied; every other object of the set was. A
// GitRepository of a cluster-wide namespace that applies into team
// namespaces is thus not frozen by one team that created an object of the
// same name first. Err holds the ObjectErrors.
type PartialError struct {
	Namespaces []string
	Err        error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("nothing applied in namespace %s, the other namespaces were applied: %v",
		strings.Join(e.Namespaces, ", "), e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// groupsOf maps the ID of every object of set to its namespace, "" for
// cluster-scoped objects.
func groupsOf(set []*item) map[string]string {
	out := make(map[string]string, len(set))
	for _, it := range set {
		out[it.id] = it.obj.GetNamespace()
	}
	return out
}

// objectID is the ID of the object err is about, "" when it is about none.
func objectID(err error) string {
	var oe *ObjectError
	if errors.As(err, &oe) {
		return oe.ID
	}
	return ""
}

func refusedNamespaces(refused map[string][]error) []string {
	out := make([]string, 0, len(refused))
	for ns := range refused {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// keepItems returns the items that are not in a refused namespace.
func keepItems(its []*item, refused map[string][]error) []*item {
	var out []*item
	for _, it := range its {
		if _, no := refused[it.obj.GetNamespace()]; !no {
			out = append(out, it)
		}
	}
	return out
}

// keepPlans returns the plans that are not in a refused namespace.
func keepPlans(ps []*plan, refused map[string][]error) []*plan {
	var out []*plan
	for _, p := range ps {
		if _, no := refused[p.obj.GetNamespace()]; !no {
			out = append(out, p)
		}
	}
	return out
}

// within returns the entries of inv in one of namespaces: the inventory of
// namespaces that were not applied this time, kept as it was so that their
// objects are neither forgotten nor pruned.
func within(inv *v1alpha1.Inventory, namespaces []string) []v1alpha1.ObjectRef {
	if inv == nil {
		return nil
	}
	var out []v1alpha1.ObjectRef
	for _, e := range inv.Entries {
		m, err := object.ParseObjMetadata(e.ID)
		if err == nil && m.Namespace != "" && slices.Contains(namespaces, m.Namespace) {
			out = append(out, e)
		}
	}
	return out
}
