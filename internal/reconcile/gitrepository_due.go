/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_due.go: nextRuns, when each GitRepository's next reconcile
// is due, so that a request left over from before its last one does
// nothing.

package reconcile

import (
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// dueSlack is how early before its due time a reconcile runs anyway: the
// work queue hands an item back at its time or a little after, never much
// before.
const dueSlack = time.Second

// nextRuns remembers, for each GitRepository whose last reconcile ended
// with a time for the next (its poll, or a retry), that time and the
// resourceVersions the reconcile started from and left. A reconcile
// request for an object that has not changed since (one of those
// resourceVersions: no spec, annotation, label or status write by anyone
// else; the first is what a cache still shows that has not yet seen the
// reconcile's own status write) and whose time has not come is one left
// over from before that reconcile: a requeue of a reconcile that
// found the namespace's workers busy and was then woken when one freed
// (namespaceSlots), or a second event of a burst. Without this, every
// GitRepository that once waited for its namespace made one more poll (a
// listing and a dry-run per managed object) right after its first. A
// controller that starts remembers nothing, and reconciles everything.
type nextRuns struct {
	mu  sync.Mutex
	due map[types.NamespacedName]nextRun
}

type nextRun struct {
	// resourceVersions are those the reconcile started from, wrote its
	// status at and left: a request that reads one of the earlier ones is
	// one queued before the reconcile ended, read from a cache that has not
	// yet seen all of its status writes.
	resourceVersions []string
	at               time.Time
}

// notYet is how long until the object's next reconcile is due, when it is
// unchanged since its last one and that time is more than dueSlack away.
func (n *nextRuns) notYet(id types.NamespacedName, resourceVersion string, now time.Time) (time.Duration, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	next, ok := n.due[id]
	if !ok || !slices.Contains(next.resourceVersions, resourceVersion) {
		return 0, false
	}
	wait := next.at.Sub(now)
	return wait, wait > dueSlack
}

// note records how a reconcile of id ended: the resourceVersions it went
// through, the one it left last, and, when it asked for one, the time of
// the next. Only the reconcile's own writes may lie between the first and
// the last: its status writes are made over the version they read
// (patchStatus), and a rebased one is not noted. An error, or no time (a
// terminal failure), records nothing: the next request runs.
func (n *nextRuns) note(id types.NamespacedName, resourceVersions []string, res ctrl.Result, err error, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err != nil || res.RequeueAfter <= 0 || len(resourceVersions) == 0 || resourceVersions[len(resourceVersions)-1] == "" {
		delete(n.due, id)
		return
	}
	if n.due == nil {
		n.due = map[types.NamespacedName]nextRun{}
	}
	n.due[id] = nextRun{resourceVersions: resourceVersions, at: now.Add(res.RequeueAfter)}
}

// asked is what of a GitRepository asks for a reconcile: its spec (by
// generation) and its annotations. A status write's answer that carries a
// change the reconcile did not see (a patch without optimistic lock) must
// not be noted as handled.
type asked struct {
	generation  int64
	annotations map[string]string
}

func askedOf(gr *v1alpha1.GitRepository) asked {
	return asked{generation: gr.Generation, annotations: maps.Clone(gr.Annotations)}
}

// same reports whether gr asks for what a was.
func (a asked) same(gr *v1alpha1.GitRepository) bool {
	return a.generation == gr.Generation && maps.Equal(a.annotations, gr.Annotations)
}

// forget drops what is known of an object.
func (n *nextRuns) forget(id types.NamespacedName) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.due, id)
}
