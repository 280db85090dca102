/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// watch.go: watches, the metadata of applied objects kept by metadata-only
// informers (one per identity, namespace and resource), which lets an idle
// Apply find an object untouched without asking the API server.

package apply

import (
	"sync"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// Lifetimes of a watch. A watch whose list or start fails is thrown away,
// never trusted again: its cache may have missed a change. The next
// lookup starts a new one, which lists afresh, at most once per
// restartAfter, or per refusedFor when the API server refused the
// identity the list (no list or watch permission, a resource gone). A
// watch not looked up for unusedFor stops.
const (
	restartAfter = 10 * time.Second
	refusedFor   = 10 * time.Minute
	unusedFor    = 2 * time.Hour
)

// trustFor is how long a watch is trusted after it listed: then the next
// lookup starts a new one, which lists afresh. A stream that stalls with
// no error (a half-open connection, a proxy that buffers) shows nothing
// new, so an object's drift is corrected at most trustFor late; a watch
// that the API server cuts is listed again by client-go's reflector
// itself. A var for tests.
var trustFor = 10 * time.Minute

// hashAnnotation holds, in a watch's cache, the metaHash of the object's
// metadata, which replaces its labels and annotations there. The API
// server refuses it as an annotation key (it has a space), so no object
// it serves carries it: a cached object is told from a served one.
const hashAnnotation = "bggitops.dev/metadata hash"

// watches keeps the metadata-only informers of an Applier.
type watches struct {
	mu     sync.Mutex
	m      map[watchKey]*watched
	swept  time.Time
	closed bool
}

// watchKey is what one informer watches: the objects of one resource in
// one namespace ("" for cluster-scoped ones), as one identity ("" for the
// Applier's own user): an identity sees through its watch only what it
// may list.
type watchKey struct {
	user, namespace string
	gvr             schema.GroupVersionResource
}

type watched struct {
	inf  cache.SharedIndexInformer
	stop chan struct{}
	// ended is set when the watch ended with an error; until notBefore no
	// new one starts for the key.
	ended     bool
	notBefore time.Time
	used      time.Time
	started   time.Time
}

func newWatches() *watches { return &watches{m: map[watchKey]*watched{}} }

// lookup returns the metadata of the object namespace/name of key's
// resource as key's watch last saw it. known is false while the watch is
// not usable: being started or listing, or ended by an error. The watch is
// started on first use with mc, the metadata client of key's identity.
func (w *watches) lookup(mc metadata.Interface, key watchKey, name string) (pm *metav1.PartialObjectMetadata, known bool) {
	if w == nil || mc == nil {
		return nil, false
	}
	now := time.Now()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, false
	}
	w.sweep(now)
	e := w.m[key]
	if e != nil && !e.ended && now.Sub(e.started) >= trustFor {
		w.stop(e, now)
	}
	switch {
	case e == nil || e.ended && !now.Before(e.notBefore):
		e = w.start(mc, key, now)
	case e.ended:
		w.mu.Unlock()
		return nil, false
	}
	e.used = now
	w.mu.Unlock()
	if !e.inf.HasSynced() {
		return nil, false
	}
	id := name
	if key.namespace != "" {
		id = key.namespace + "/" + name
	}
	obj, exists, err := e.inf.GetStore().GetByKey(id)
	if err != nil {
		return nil, false
	}
	w.mu.Lock()
	ended := e.ended
	w.mu.Unlock()
	if ended {
		return nil, false
	}
	if !exists {
		return nil, true
	}
	pm, ok := obj.(*metav1.PartialObjectMetadata)
	return pm, ok
}

// start starts key's informer; w.mu is held.
func (w *watches) start(mc metadata.Interface, key watchKey, now time.Time) *watched {
	inf := metadatainformer.NewFilteredMetadataInformer(mc, key.gvr, key.namespace, 0, cache.Indexers{}, nil).Informer()
	e := &watched{inf: inf, stop: make(chan struct{}), used: now, started: now}
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { w.end(key, e, err) })
	_ = inf.SetTransform(shrink)
	w.m[key] = e
	go inf.Run(e.stop)
	return e
}

// shrink keeps of an object in a watch's cache only what an Apply
// compares: its identity, UID, resourceVersion, generation and the hash
// of the rest of its metadata. A watch sees every object of its namespace
// and resource, also those bg-gitops does not manage: their annotations
// (kubectl's last-applied-configuration holds a Secret's data) and
// managed fields are not kept.
func shrink(obj any) (any, error) {
	pm, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	if _, shrunk := pm.Annotations[hashAnnotation]; shrunk && len(pm.Annotations) == 1 && len(pm.Labels) == 0 {
		return obj, nil // client-go may transform an object twice
	}
	return &metav1.PartialObjectMetadata{TypeMeta: pm.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: pm.Name, Namespace: pm.Namespace, UID: pm.UID, ResourceVersion: pm.ResourceVersion,
		Generation: pm.Generation, Annotations: map[string]string{hashAnnotation: metaHash(pm)},
	}}, nil
}

// end stops the watch e of key after an error: its cache is not trusted
// again.
func (w *watches) end(key watchKey, e *watched, err error) {
	wait := restartAfter
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		wait = refusedFor
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop(e, time.Now().Add(wait))
}

// stop ends e; no new watch of its key starts before notBefore. w.mu is
// held.
func (w *watches) stop(e *watched, notBefore time.Time) {
	if e.ended {
		return
	}
	e.ended, e.notBefore = true, notBefore
	close(e.stop)
}

// sweep stops the watches not looked up for unusedFor, at most once a
// minute; w.mu is held.
func (w *watches) sweep(now time.Time) {
	if now.Sub(w.swept) < time.Minute {
		return
	}
	w.swept = now
	for key, e := range w.m {
		if now.Sub(e.used) < unusedFor {
			continue
		}
		w.stop(e, now)
		delete(w.m, key)
	}
}

// close stops every watch, and starts none after.
func (w *watches) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	now := time.Now()
	for key, e := range w.m {
		w.stop(e, now)
		delete(w.m, key)
	}
}

// watchedUntouched reports whether it, known in sync for r's identity, is
// untouched since as its watch shows it. A CRD is always dry-run: the
// Apply reads whether it is established from the result.
func (r *run) watchedUntouched(it *item) bool {
	if r.look == nil || utils.IsCRD(it.obj) {
		return false
	}
	if _, ok := r.memo.entry(r.user, it); !ok {
		return false
	}
	pm, known := r.look(it)
	return known && r.memo.untouched(r.user, it, pm)
}

// lookFor finds an object in the watch of its namespace and resource as
// user, whose metadata client md is.
func (a *Applier) lookFor(user string, md metadata.Interface) func(*item) (*metav1.PartialObjectMetadata, bool) {
	return func(it *item) (*metav1.PartialObjectMetadata, bool) {
		gvk := it.obj.GroupVersionKind()
		m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, false
		}
		key := watchKey{user: user, gvr: m.Resource}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			key.namespace = it.obj.GetNamespace()
		}
		return a.watches.lookup(md, key, it.obj.GetName())
	}
}

// Close stops the Applier's watches and starts none after: an Apply after
// it dry-runs every object.
func (a *Applier) Close() { a.watches.close() }
