/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// stamp.go: Stamps and Stamp, the revision and source annotations set on
// every applied object.

package objects

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Stamps are the annotations the controller sets on every object it
// applies. They record which commit and GitRepository applied the object;
// they are not drift.
var Stamps = []string{v1alpha1.RevisionAnnotation, v1alpha1.SourceAnnotation}

// Stamp sets the revision and source annotations of u to the values that
// are not empty, over any value from Git: prune trusts the source, so a
// manifest must not claim another one.
func Stamp(u *unstructured.Unstructured, revision, source string) {
	if revision == "" && source == "" {
		return
	}
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if revision != "" {
		a[v1alpha1.RevisionAnnotation] = revision
	}
	if source != "" {
		a[v1alpha1.SourceAnnotation] = source
	}
	u.SetAnnotations(a)
}
