/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// namespaceslots.go: namespaceSlots, the bound on how many of a controller's
// workers one namespace may hold, with wake-ups when a slot frees.

package reconcile

import (
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// busyRetry is when an object whose namespace had no free slot is looked
// at again if no slot is released before (a released slot wakes the
// object that has waited longest at once).
const busyRetry = 2 * time.Second

// wakeBuffer bounds the wake-ups not yet taken by the controller; past it
// busyRetry wakes the object.
const wakeBuffer = 1024

// namespaceSlots shares one controller's workers between namespaces, so
// that one tenant cannot hold them all: a fetch from a git server that
// never answers holds its worker for spec.timeout (up to 5 minutes), a
// forge that never answers a commit status for 10 seconds at every try,
// and a tenant with as many such objects as workers would otherwise stop
// every other namespace's rollouts. A namespace that holds no worker may
// always take one; a namespace that holds some may take another only up
// to max, and only while one worker stays free for the others. A
// reconcile refused a slot is requeued without a status write, and woken
// when a slot is released: a burst of objects in one namespace (a
// tenant creating fifty at once) runs as fast as its slots allow.
type namespaceSlots struct {
	max     int // per namespace; <= 0: no bound
	workers int
	mu      sync.Mutex
	busy    map[string]int
	total   int
	// waiting are the objects refused a slot, oldest first.
	waiting []types.NamespacedName
	wake    chan event.GenericEvent
}

// newNamespaceSlots bounds the namespaces of a controller of workers
// workers to perNamespace each (0: all but one; negative: no bound).
func newNamespaceSlots(workers, perNamespace int) *namespaceSlots {
	if perNamespace == 0 {
		perNamespace = max(workers-1, 1)
	}
	return &namespaceSlots{max: perNamespace, workers: workers, busy: map[string]int{},
		wake: make(chan event.GenericEvent, wakeBuffer)}
}

// source is the controller's watch of the wake-ups (nil: no bound, so no
// wake-ups).
func (s *namespaceSlots) source() source.Source {
	if s == nil || s.max <= 0 {
		return nil
	}
	return source.Channel(s.wake, &handler.EnqueueRequestForObject{})
}

// acquire takes a slot of key's namespace; ok is false when it may not
// take one now, and key is then woken when a slot is released.
func (s *namespaceSlots) acquire(key types.NamespacedName) (release func(), ok bool) {
	if s == nil || s.max <= 0 {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := key.Namespace
	if held := s.busy[ns]; held > 0 && (held >= s.max || s.total+1 >= s.workers) {
		if !slices.Contains(s.waiting, key) {
			s.waiting = append(s.waiting, key)
		}
		return nil, false
	}
	s.waiting = slices.DeleteFunc(s.waiting, func(k types.NamespacedName) bool { return k == key })
	s.busy[ns]++
	s.total++
	return func() { s.release(ns) }, true
}

// tryAcquire takes a slot of key's namespace like acquire, but a refused
// key is not woken on a release (the wake-ups are the sync's): it looks
// again after busyRetry. The pull-request planner takes its slots so.
func (s *namespaceSlots) tryAcquire(key types.NamespacedName) (release func(), ok bool) {
	if s == nil || s.max <= 0 {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := key.Namespace
	if held := s.busy[ns]; held > 0 && (held >= s.max || s.total+1 >= s.workers) {
		return nil, false
	}
	s.busy[ns]++
	s.total++
	return func() { s.release(ns) }, true
}

// release frees a slot of ns and wakes the object that waited longest,
// preferring one of ns (the namespace whose bound it most likely hit).
func (s *namespaceSlots) release(ns string) {
	s.mu.Lock()
	s.total--
	if s.busy[ns]--; s.busy[ns] == 0 {
		delete(s.busy, ns)
	}
	next, ok := s.nextWaiting(ns)
	s.mu.Unlock()
	if !ok {
		return
	}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: next.Namespace, Name: next.Name}}
	select {
	case s.wake <- event.GenericEvent{Object: client.Object(obj)}:
	default: // full: busyRetry wakes it
	}
}

// nextWaiting removes and returns the oldest waiting object of ns, else
// the oldest of any namespace. s.mu is held.
func (s *namespaceSlots) nextWaiting(ns string) (types.NamespacedName, bool) {
	if len(s.waiting) == 0 {
		return types.NamespacedName{}, false
	}
	i := slices.IndexFunc(s.waiting, func(k types.NamespacedName) bool { return k.Namespace == ns })
	if i < 0 {
		i = 0
	}
	next := s.waiting[i]
	s.waiting = slices.Delete(s.waiting, i, i+1)
	return next, true
}
