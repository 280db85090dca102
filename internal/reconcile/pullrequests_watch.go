/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pullrequests_watch.go: the predicates that keep the pull-request planner
// and the sync out of each other's way — a plan request wakes the
// planner only, and only GitRepositories that plan are watched by it.

package reconcile

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// plansPullRequests passes the GitRepositories with spec.pullRequests, and
// an update that removes it (its plans are dropped).
var plansPullRequests = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return plans(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return plans(e.ObjectOld) || plans(e.ObjectNew) },
	DeleteFunc:  func(e event.DeleteEvent) bool { return plans(e.Object) },
	GenericFunc: func(e event.GenericEvent) bool { return plans(e.Object) },
}

func plans(o client.Object) bool {
	gr, ok := o.(*v1alpha1.GitRepository)
	return ok && gr.Spec.PullRequests != nil
}

// annotationChanged passes an update that changes annotation key.
func annotationChanged(key string) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[key] != e.ObjectNew.GetAnnotations()[key]
	}}
}

// annotationsChangedBut passes an update that changes an annotation other
// than key: a plan request does not wake the sync.
func annotationsChangedBut(key string) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !maps.Equal(without(e.ObjectOld.GetAnnotations(), key), without(e.ObjectNew.GetAnnotations(), key))
	}}
}

func without(m map[string]string, key string) map[string]string {
	out := maps.Clone(m)
	delete(out, key)
	return out
}
