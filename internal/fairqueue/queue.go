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

// Queue is a work queue with the semantics of client-go's workqueue.Typed
// (an item added twice before it is taken waits once; an item being
// processed is not handed out again until Done, and one added meanwhile
// waits until then) but a fair order: Get takes the next namespace in
// round-robin order among those waiting that hold the fewest items being
// processed. So while more than one namespace waits, no namespace is
// handed a second item while another that waits holds none, and a
// namespace alone may use every worker.
type Queue[T comparable] struct {
	namespace func(T) string

	mu   sync.Mutex
	cond *sync.Cond
	// ready holds the waiting items of each namespace, oldest first;
	// turns the namespaces that have some, in round-robin order.
	ready map[string][]T
	turns []string
	// dirty are the items that wait (ready, or re-added while processing).
	dirty      map[T]struct{}
	processing map[T]struct{}
	held       map[string]int

	shuttingDown bool
	drain        bool
}

var _ workqueue.TypedInterface[reconcile.Request] = &Queue[reconcile.Request]{}

// New returns an empty queue ordering items by namespace(item).
func New[T comparable](namespace func(T) string) *Queue[T] {
	q := &Queue[T]{namespace: namespace, ready: map[string][]T{}, dirty: map[T]struct{}{},
		processing: map[T]struct{}{}, held: map[string]int{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// NewRateLimiting is a controller's queue: delays and rate limiting are
// client-go's, the order of the items ready is q's.
func NewRateLimiting[T comparable](name string, rl workqueue.TypedRateLimiter[T], namespace func(T) string) workqueue.TypedRateLimitingInterface[T] {
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[T]{
		Name: name, Queue: New(namespace)})
	return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[T]{
		Name: name, DelayingQueue: delaying})
}

// ForRequests is NewRateLimiting for reconcile.Requests, with the
// signature of controller.Options.NewQueue.
func ForRequests(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return NewRateLimiting(name, rl, func(r reconcile.Request) string { return r.Namespace })
}

// Add queues item unless it waits already; an item being processed waits
// until it is Done.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if _, ok := q.dirty[item]; ok {
		return
	}
	q.dirty[item] = struct{}{}
	if _, ok := q.processing[item]; ok {
		return
	}
	q.push(item)
}

// push makes item ready. q.mu is held.
func (q *Queue[T]) push(item T) {
	ns := q.namespace(item)
	if len(q.ready[ns]) == 0 {
		q.turns = append(q.turns, ns)
	}
	q.ready[ns] = append(q.ready[ns], item)
	q.cond.Signal()
}

// Len is the number of items ready to be taken.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.readyLen()
}

func (q *Queue[T]) readyLen() int {
	n := 0
	for _, items := range q.ready {
		n += len(items)
	}
	return n
}

// Get blocks until an item is ready and hands out the fairest one (see
// Queue); shutdown is true once the queue is shut down and empty.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.turns) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if len(q.turns) == 0 {
		return *new(T), true
	}
	ns := q.nextNamespace()
	item = q.ready[ns][0]
	q.ready[ns] = q.ready[ns][1:]
	if len(q.ready[ns]) == 0 {
		delete(q.ready, ns)
	} else {
		q.turns = append(q.turns, ns)
	}
	delete(q.dirty, item)
	q.processing[item] = struct{}{}
	q.held[ns]++
	return item, false
}

// nextNamespace removes from the turns and returns the first namespace
// among those holding the fewest items. q.mu is held; turns is not empty.
func (q *Queue[T]) nextNamespace() string {
	best := 0
	for i, ns := range q.turns {
		if q.held[ns] < q.held[q.turns[best]] {
			best = i
		}
	}
	ns := q.turns[best]
	q.turns = slices.Delete(q.turns, best, best+1)
	return ns
}

// Done ends the processing of item; if it was added meanwhile it is ready
// again.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.processing[item]; !ok {
		return
	}
	delete(q.processing, item)
	ns := q.namespace(item)
	if q.held[ns]--; q.held[ns] <= 0 {
		delete(q.held, ns)
	}
	if _, ok := q.dirty[item]; ok {
		q.push(item)
	}
	if len(q.processing) == 0 {
		q.cond.Broadcast() // a draining ShutDownWithDrain
	}
}

// ShutDown makes Get return shutdown once no item is ready, and Add drop
// new items.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = false
	q.shuttingDown = true
	q.cond.Broadcast()
}

// ShutDownWithDrain is ShutDown, then waits until every item handed out
// is Done (or ShutDown is called).
func (q *Queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = true
	q.shuttingDown = true
	q.cond.Broadcast()
	for len(q.processing) != 0 && q.drain {
		q.cond.Wait()
	}
}

// ShuttingDown reports whether ShutDown was called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
