/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// applying.go: Applying, the set each GitRepository applied last, kept in
// this process until its inventory records it, so that the commit status
// reporter can verify the source of an object of another namespace.

package reconcile

import (
	"sync"

	"github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
)

// Applying remembers, in this process, the rendered set each GitRepository
// applied last, with its revision: from the apply of its objects until its
// status records them (its inventory), only this shows that it applies
// them. The commit status of an object of another namespace is trusted on
// it, and not on the GitRepository's last commit being not applied yet,
// which a commit whose build failed is too.
type Applying struct {
	mu   sync.Mutex
	sets map[string]renderedSet // by bggitops.dev/source value
}

type renderedSet struct {
	revision string
	ids      map[string]bool
}

// begin records objs as the set source applies at revision.
func (a *Applying) begin(source, revision string, objs []*unstructured.Unstructured) {
	if a == nil {
		return
	}
	ids := make(map[string]bool, len(objs))
	for _, o := range objs {
		ids[objects.Key(o).String()] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sets == nil {
		a.sets = map[string]renderedSet{}
	}
	a.sets[source] = renderedSet{revision: revision, ids: ids}
}

// applied narrows source's set at revision to the objects inv lists, once
// the apply has returned: an object of the set the apply did not write
// (refused as another's, a squatted name, or not reached) is not one
// source applies, whatever annotations its creator wrote on it. After a
// failed apply inv is the previous inventory plus what was written.
func (a *Applying) applied(source, revision string, inv *v1alpha1.Inventory) {
	if a == nil {
		return
	}
	written := map[string]bool{}
	if inv != nil {
		for _, e := range inv.Entries {
			written[e.ID] = true
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sets[source]
	if !ok || s.revision != revision {
		return
	}
	for id := range s.ids {
		if !written[id] {
			delete(s.ids, id)
		}
	}
}

// forget drops what source applied (the GitRepository is gone).
func (a *Applying) forget(source string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sets, source)
}

// has reports whether source's last applied set, at revision, holds id.
func (a *Applying) has(source, revision, id string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sets[source]
	return ok && s.revision == revision && s.ids[id]
}

// objectID is an inventory entry's ID.
func objectID(namespace, name string, gk schema.GroupKind) string {
	return object.ObjMetadata{Namespace: namespace, Name: name, GroupKind: gk}.String()
}
