/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/worker"
)

// Renderer renders a checkout with kustomize and remembers the last render
// of each GitRepository, so that a poll of an unchanged revision (which
// re-applies to revert drift) does not run kustomize again. A terminal
// failure is remembered the same way, until the revision, path or target
// namespace changes: the same build would fail the same way, and one that
// ran out of its own time would take a running place for as long again at
// every poll, keeping other repositories' builds waiting.
type Renderer struct {
	// Options every build starts from: remote bases, file URLs and limits.
	// Per-build fields (revision, source, target namespace, tenant) are
	// set by Render.
	Options render.Options
	// Mapper tells cluster-scoped kinds that the build does not know.
	Mapper meta.RESTMapper
	// Worker, when set, runs every build in a worker process the OS
	// bounds (see package worker); in-process when nil.
	Worker *worker.Pool

	mu    sync.Mutex
	cache map[types.NamespacedName]rendered
}

// rendered is the last render of a GitRepository: its objects, or its
// terminal failure.
type rendered struct {
	key  string
	objs []*unstructured.Unstructured
	err  error
}

// Render returns the stamped objects of gr's path at revision. Builds run
// as the GitRepository's namespace (render.Options.Tenant): its builds take
// one running place at most.
func (r *Renderer) Render(ctx context.Context, gr *v1alpha1.GitRepository, dir, revision string) ([]*unstructured.Unstructured, error) {
	id := types.NamespacedName{Namespace: gr.Namespace, Name: gr.Name}
	key := revision + "\x00" + gr.GetPath() + "\x00" + gr.Spec.TargetNamespace
	if c, ok := r.cached(id, key); ok {
		if c.err != nil {
			return nil, c.err
		}
		return deepCopy(c.objs), nil
	}
	o := r.Options
	o.Revision, o.Source, o.TargetNamespace = revision, gr.SourceValue(), gr.Spec.TargetNamespace
	o.Tenant = gr.Namespace
	o.IsClusterScoped = r.clusterScoped
	objs, err := r.build(ctx, dir, gr.GetPath(), o)
	if err != nil {
		if terminalRender(ctx, err) {
			r.store(id, rendered{key: key, err: err})
		}
		return nil, err
	}
	r.store(id, rendered{key: key, objs: objs})
	return deepCopy(objs), nil
}

// build runs one build, in a worker when there is one; the worker's
// objects get their target namespace here, from the RESTMapper.
func (r *Renderer) build(ctx context.Context, dir, path string, o render.Options) ([]*unstructured.Unstructured, error) {
	if r.Worker == nil {
		return render.BuildContext(ctx, dir, path, o)
	}
	ns := o.TargetNamespace
	o.TargetNamespace, o.IsClusterScoped = "", nil
	objs, err := r.Worker.Build(ctx, dir, path, o)
	if err != nil {
		return nil, err
	}
	if err := render.Namespace(objs, ns, r.clusterScoped); err != nil {
		return nil, &render.BuildError{Path: path, Err: err}
	}
	return objs, nil
}

// terminalRender reports whether a failed build would fail again unchanged:
// anything but a build that waited for others (retryableRender), or one
// that ended because the reconcile did (its context: a shutdown, not the
// revision).
func terminalRender(ctx context.Context, err error) bool {
	return !retryableRender(err) && ctx.Err() == nil
}

func (r *Renderer) cached(id types.NamespacedName, key string) (rendered, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.cache[id]
	if !ok || c.key != key {
		return rendered{}, false
	}
	return c, true
}

func (r *Renderer) store(id types.NamespacedName, c rendered) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil {
		r.cache = map[types.NamespacedName]rendered{}
	}
	r.cache[id] = c
}

// Forget drops the cached render (or failure) of a deleted GitRepository.
func (r *Renderer) Forget(id types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.cache, id)
}

func (r *Renderer) clusterScoped(gvk schema.GroupVersionKind) (bool, bool) {
	if r.Mapper == nil {
		return false, false
	}
	namespaced, err := objects.Namespaced(r.Mapper, gvk)
	if err != nil {
		return false, false
	}
	return !namespaced, true
}

func deepCopy(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}

// retryableRender reports whether a failed build may succeed unchanged: it
// ran out of time waiting for other builds to make room (Waiting), or its
// worker could not start or answer (worker.ErrWorker), which is no
// property of the revision. A build that itself ran past its time limit
// is terminal for the revision like any other limit: a retry would run the
// same kustomize work again, and the abandoned run goes on until its next
// file operation, so every retry would start another one (memory grows,
// and the runs hold the places other builds wait for). The Renderer
// remembers such a failure: the revision is built again only with a new
// commit (or a new path or target namespace).
func retryableRender(err error) bool {
	var le *render.LimitError
	return errors.As(err, &le) && le.Waiting || errors.Is(err, worker.ErrWorker)
}
