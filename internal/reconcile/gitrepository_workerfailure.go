/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_workerfailure.go: fetches and builds whose worker process
// died — recording the failure in status and not running that build again
// until a reconcile is requested.

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/worker"
)

// A fetch or build whose worker process died (a limit, a stack overflow,
// a fatal error of the Go runtime) is recorded in
// status.lastWorkerFailure, written with the reconcile's status, so that
// no controller runs it again, a restarted one included: the same input
// would kill the same worker at every poll, each time for as long as its
// limits allow, holding a slot other namespaces wait for. It runs again
// when the revision, the path or the target namespace changes, or when a
// reconcile is requested (an administrator raised a limit).

// requested reports whether this reconcile was asked for (bg-gitops
// reconcile, a webhook): it reads Secrets afresh and retries what a dead
// worker stopped. An annotation removed after it was handled asks for
// nothing.
func (run *gitRun) requested() bool {
	at, ok := run.gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
	return ok && at != run.base.Status.LastHandledReconcileAt
}

// fetchSource runs the fetch, in a worker process when the controller has
// them; sec is the Secret o.Auth was made from (nil without one).
func (r *GitRepositoryReconciler) fetchSource(ctx context.Context, run *gitRun, o source.Options, sec *corev1.Secret) (source.Result, error) {
	if r.Worker == nil {
		return source.Fetch(ctx, o)
	}
	// Over HTTP(S), whose answers the controller bounds, the refs are
	// listed here: a poll of an unchanged ref starts no worker, a worker
	// fetches the commit listed without listing again (the listing is
	// carried to it, one listing in all), and a creation's listing waits
	// for no worker, which a namespace has one of at a time. Over SSH
	// nothing bounds what the server sends, and a ref advertisement
	// without end would take the controller's memory: the worker lists,
	// under its limits, at every poll.
	if httpURL(o.URL) {
		// The directory may hold the commit checked out already, fetched
		// by another object of its share (has): nothing is left to fetch.
		polled, unchanged, has, err := r.poll(ctx, run, o)
		if err != nil || unchanged || has {
			if err == nil {
				r.clearWorkerFailure(run, v1alpha1.WorkerStageFetch)
			}
			return polled, err
		}
		o.Target = polled.Target
	}
	gr := run.gr
	var data map[string][]byte
	name := ""
	if sec != nil {
		data, name = sec.Data, sec.Name
	}
	skip := ""
	if f := gr.Status.LastWorkerFailure; f != nil && f.Stage == v1alpha1.WorkerStageFetch && !run.requested() {
		skip = f.Revision
	}
	res, err := r.Worker.Fetch(ctx, gr.Namespace, o, data, name, skip)
	var died *worker.DiedError
	switch {
	case errors.Is(err, worker.ErrUnchanged):
		f := gr.Status.LastWorkerFailure
		return res, source.NewError(source.ReasonLimitExceeded, f.Message+
			"; not fetched again until the ref moves or a reconcile is requested", nil)
	case errors.As(err, &died):
		r.recordWorkerFailure(run, v1alpha1.WorkerFailure{Stage: v1alpha1.WorkerStageFetch, Revision: died.Revision, Message: err.Error()})
	case err == nil:
		r.clearWorkerFailure(run, v1alpha1.WorkerStageFetch)
	}
	return res, err
}

// httpURL reports whether a repository URL is HTTP(S).
func httpURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http")
}

// knownBuildFailure is the recorded failure of this very build (revision,
// path, target namespace), nil when there is none or a reconcile was
// requested.
func knownBuildFailure(run *gitRun, rev string) *v1alpha1.WorkerFailure {
	f := run.gr.Status.LastWorkerFailure
	if f == nil || f.Stage != v1alpha1.WorkerStageBuild || run.requested() {
		return nil
	}
	if f.Revision != rev || f.Path != run.gr.GetPath() || f.TargetNamespace != run.gr.Spec.TargetNamespace {
		return nil
	}
	return f
}

// noteBuild records a build whose worker died, and forgets the record of
// an earlier one once a build ran to an answer.
func (r *GitRepositoryReconciler) noteBuild(run *gitRun, rev string, err error) {
	var died *worker.DiedError
	switch {
	case errors.As(err, &died):
		r.recordWorkerFailure(run, v1alpha1.WorkerFailure{Stage: v1alpha1.WorkerStageBuild, Revision: rev,
			Path: run.gr.GetPath(), TargetNamespace: run.gr.Spec.TargetNamespace, Message: err.Error()})
	case err == nil || !retryableRender(err):
		r.clearWorkerFailure(run, v1alpha1.WorkerStageBuild)
	}
}

// knownBuildError is the error of a build not run again.
func knownBuildError(f *v1alpha1.WorkerFailure) error {
	return fmt.Errorf("%s; not built again until the revision, path or target namespace changes or a reconcile is requested", f.Message)
}

// recordWorkerFailure writes f, its message scrubbed of secret values
// (it is kept past the render whose values the scrubber knows). The same
// run dying the same way again (a fetch that died before resolving its
// ref, a requested retry) keeps the record as it is: only its measured
// peak differs, and the status would churn.
func (r *GitRepositoryReconciler) recordWorkerFailure(run *gitRun, f v1alpha1.WorkerFailure) {
	f.Message = r.Redact.ForSource(client.ObjectKeyFromObject(run.gr)).Scrub(f.Message)
	old := run.gr.Status.LastWorkerFailure
	if old != nil && old.Stage == f.Stage && old.Revision == f.Revision && old.Path == f.Path &&
		old.TargetNamespace == f.TargetNamespace && withoutPeak(old.Message) == withoutPeak(f.Message) {
		return
	}
	f.Time = metav1.NewTime(r.now())
	run.gr.Status.LastWorkerFailure = &f
}

// peak is the measured peak a worker's death message names.
var peak = regexp.MustCompile(` \(peak resident \d+ MiB\)`)

func withoutPeak(msg string) string { return peak.ReplaceAllString(msg, "") }

func (r *GitRepositoryReconciler) clearWorkerFailure(run *gitRun, stage string) {
	if f := run.gr.Status.LastWorkerFailure; f != nil && f.Stage == stage {
		run.gr.Status.LastWorkerFailure = nil
	}
}
