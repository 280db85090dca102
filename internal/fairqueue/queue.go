/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package fairqueue owns the order in which a controller's workers take
// objects: round-robin across the namespaces that have objects waiting, so
// that a tenant with many objects (or many that hang) cannot take the
// workers every other tenant's objects wait for.
package fairqueue

import (
	"slices"
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Queue is client-go's work queue (an item added twice before it is
// taken waits once; an item being processed is not handed out again
// until Done, and one added meanwhile waits until then; shutdown and
// metrics as there) with a fair order: Get takes the next namespace in
// round-robin order among those waiting that hold the fewest items being
// processed. So while more than one namespace waits, no namespace is
// handed a second item while another that waits holds none, and a
// namespace alone may use every worker.
type Queue[T comparable] struct {
	*workqueue.Typed[T]
	order *fairOrder[T]
}

var _ workqueue.TypedInterface[reconcile.Request] = &Queue[reconcile.Request]{}

// New returns an empty queue ordering items by namespace(item); name
// names its metrics ("": none).
func New[T comparable](name string, namespace func(T) string) *Queue[T] {
	order := &fairOrder[T]{namespace: namespace, ready: map[string][]T{}, taken: map[T]struct{}{}, held: map[string]int{}}
	return &Queue[T]{Typed: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[T]{Name: name, Queue: order}), order: order}
}

// Done ends the processing of item; if it was added meanwhile it is ready
// again.
func (q *Queue[T]) Done(item T) {
	q.order.release(item)
	q.Typed.Done(item)
}

// NewRateLimiting is a controller's queue: delays and rate limiting are
// client-go's, the order of the items ready is q's.
func NewRateLimiting[T comparable](name string, rl workqueue.TypedRateLimiter[T], namespace func(T) string) workqueue.TypedRateLimitingInterface[T] {
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[T]{
		Name: name, Queue: New(name, namespace)})
	return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[T]{
		Name: name, DelayingQueue: delaying})
}

// ForRequests is NewRateLimiting for reconcile.Requests, with the
// signature of controller.Options.NewQueue.
func ForRequests(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return NewRateLimiting(name, rl, func(r reconcile.Request) string { return r.Namespace })
}

// fairOrder holds the items ready to be taken (workqueue.Queue: the
// Typed queue calls it under its own lock, and decides what is ready).
type fairOrder[T comparable] struct {
	namespace func(T) string

	mu sync.Mutex
	// ready holds the ready items of each namespace, oldest first;
	// turns the namespaces that have some, in round-robin order.
	ready map[string][]T
	turns []string
	n     int
	// taken are the items handed out and not Done, held their count per
	// namespace.
	taken map[T]struct{}
	held  map[string]int
}

var _ workqueue.Queue[string] = &fairOrder[string]{}

func (o *fairOrder[T]) Touch(T) {}

func (o *fairOrder[T]) Push(item T) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ns := o.namespace(item)
	if len(o.ready[ns]) == 0 {
		o.turns = append(o.turns, ns)
	}
	o.ready[ns] = append(o.ready[ns], item)
	o.n++
}

func (o *fairOrder[T]) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// Pop takes the oldest item of the fairest namespace; the Typed queue
// calls it only when Len is not 0.
func (o *fairOrder[T]) Pop() T {
	o.mu.Lock()
	defer o.mu.Unlock()
	ns := o.nextNamespace()
	item := o.ready[ns][0]
	o.ready[ns] = o.ready[ns][1:]
	if len(o.ready[ns]) == 0 {
		delete(o.ready, ns)
	} else {
		o.turns = append(o.turns, ns)
	}
	o.n--
	o.taken[item] = struct{}{}
	o.held[ns]++
	return item
}

// nextNamespace removes from the turns and returns the first namespace
// among those holding the fewest items. o.mu is held; turns is not empty.
func (o *fairOrder[T]) nextNamespace() string {
	best := 0
	for i, ns := range o.turns {
		if o.held[ns] < o.held[o.turns[best]] {
			best = i
		}
	}
	ns := o.turns[best]
	o.turns = slices.Delete(o.turns, best, best+1)
	return ns
}

// release ends the hold of item's namespace on it (a second Done
// changes nothing).
func (o *fairOrder[T]) release(item T) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.taken[item]; !ok {
		return
	}
	delete(o.taken, item)
	ns := o.namespace(item)
	if o.held[ns]--; o.held[ns] <= 0 {
		delete(o.held, ns)
	}
}
