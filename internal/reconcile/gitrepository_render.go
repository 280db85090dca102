/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_render.go: Renderer, which runs kustomize builds (in a worker
// when there is one) and remembers the last render of each GitRepository.

package reconcile

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

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
//
// GitRepositories that read the same commit and path share one build:
// what kustomize made is kept as it came (stamped for the first of them,
// without a target namespace), and each gets a copy stamped with its own
// revision and source, in its own target namespace.
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
	// builds counts the kustomize builds run (benchmarks, tests).
	builds atomic.Int64
}

// rendered is the last render of a GitRepository: what kustomize made of
// its commit and path, or its terminal failure.
type rendered struct {
	key          string
	commit, path string
	raw          []*unstructured.Unstructured
	err          error
}

// Render returns the stamped objects of gr's path at revision. Builds run
// as the GitRepository's namespace (render.Options.Tenant): in worker
// processes, a namespace's builds take one slot at most.
func (r *Renderer) Render(ctx context.Context, gr *v1alpha1.GitRepository, dir, revision string) ([]*unstructured.Unstructured, error) {
	id := types.NamespacedName{Namespace: gr.Namespace, Name: gr.Name}
	commit, path := commitOf(revision), gr.GetPath()
	key := revision + "\x00" + path + "\x00" + gr.Spec.TargetNamespace
	c, ok := r.cached(id, key, commit, path)
	if !ok {
		o := r.Options
		o.Revision, o.Source, o.Tenant = revision, gr.SourceValue(), gr.Namespace
		raw, err := r.build(ctx, dir, path, o)
		if err != nil && !terminalRender(ctx, err) {
			return nil, err
		}
		c = rendered{key: key, commit: commit, path: path, raw: raw, err: err}
	}
	r.store(id, c)
	if c.err != nil {
		return nil, c.err
	}
	return r.finish(c.raw, revision, gr)
}

// Builds is how many kustomize builds the Renderer ran.
func (r *Renderer) Builds() int64 { return r.builds.Load() }

// build runs one build without a target namespace, in a worker when there
// is one.
func (r *Renderer) build(ctx context.Context, dir, path string, o render.Options) ([]*unstructured.Unstructured, error) {
	r.builds.Add(1)
	o.TargetNamespace, o.IsClusterScoped = "", nil
	if r.Worker == nil {
		return render.BuildContext(ctx, dir, path, o)
	}
	return r.Worker.Build(ctx, dir, path, o)
}

// finish is raw finished for gr at revision (render.Finish; scopes from
// the RESTMapper).
func (r *Renderer) finish(raw []*unstructured.Unstructured, revision string, gr *v1alpha1.GitRepository) ([]*unstructured.Unstructured, error) {
	t := render.Target{Revision: revision, Source: gr.SourceValue(), Namespace: gr.Spec.TargetNamespace, Path: gr.GetPath()}
	return render.Finish(raw, t, r.clusterScoped)
}

// commitOf is the hex commit of a revision (<ref>@sha1:<hex>).
func commitOf(revision string) string {
	_, hex, _ := strings.Cut(revision, "sha1:")
	return hex
}

// terminalRender reports whether a failed build would fail again unchanged:
// anything but a build that waited for others (retryableRender), or one
// that ended because the reconcile did (its context: a shutdown, not the
// revision).
func terminalRender(ctx context.Context, err error) bool {
	return !retryableRender(err) && ctx.Err() == nil
}

// cached is id's render for key, or another GitRepository's build of the
// same commit and path.
func (r *Renderer) cached(id types.NamespacedName, key, commit, path string) (rendered, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.cache[id]; ok && c.key == key {
		return c, true
	}
	if commit == "" {
		return rendered{}, false
	}
	for _, c := range r.cache {
		if c.commit == commit && c.path == path && c.err == nil {
			return rendered{key: key, commit: commit, path: path, raw: c.raw}, true
		}
	}
	return rendered{}, false
}

func (r *Renderer) store(id types.NamespacedName, c rendered) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil {
		r.cache = map[types.NamespacedName]rendered{}
	}
	r.cache[id] = c
}

// Rebuild makes the next Render of gr at revision run kustomize afresh (a
// requested reconcile: a limit raised, remote content changed): it drops
// gr's render and every other GitRepository's build of the same commit
// and path, which would otherwise be shared.
func (r *Renderer) Rebuild(gr *v1alpha1.GitRepository, revision string) {
	commit, path := commitOf(revision), gr.GetPath()
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.cache, types.NamespacedName{Namespace: gr.Namespace, Name: gr.Name})
	for id, c := range r.cache {
		if commit != "" && c.commit == commit && c.path == path {
			delete(r.cache, id)
		}
	}
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
