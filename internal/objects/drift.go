/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// drift.go: Normalize, Drifted and Restamped — comparing a live object with
// the dry-run answer of applying Git's version.

package objects

import (
	"github.com/fluxcd/pkg/ssa/normalize"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serverFields are written by the API server, never by Git: a dry-run
// answer and the live object differ in them without anyone having changed
// the object.
var serverFields = [][]string{
	{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "uid"},
	{"metadata", "creationTimestamp"}, {"metadata", "generation"}, {"metadata", "selfLink"},
	{"status"},
}

// Normalize returns the form in which a live object and a dry-run answer
// are compared: without server fields, status and Stamps, and with
// fluxcd/pkg/ssa's dry-run normalisation (an API server bug that returns
// some kinds differently from a dry-run). u is not modified.
func Normalize(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	for _, f := range serverFields {
		unstructured.RemoveNestedField(c.Object, f...)
	}
	if a := c.GetAnnotations(); a != nil {
		for _, k := range Stamps {
			delete(a, k)
		}
		c.SetAnnotations(a)
	}
	// An empty map and no map are the same object to the API server.
	for _, f := range []string{"annotations", "labels"} {
		if m, _, _ := unstructured.NestedMap(c.Object, "metadata", f); len(m) == 0 {
			unstructured.RemoveNestedField(c.Object, "metadata", f)
		}
	}
	n := c.DeepCopy()
	if err := normalize.DryRunUnstructured(n); err != nil {
		return c
	}
	return n
}

// Drifted reports whether dry, the dry-run answer of applying Git's
// version of an object, differs from the live object in anything but what
// Normalize removes: someone changed the object, or Git did. This is the
// drift `bg-gitops diff --cluster` reports and the controller re-applies.
func Drifted(live, dry *unstructured.Unstructured) bool {
	return !apiequality.Semantic.DeepEqual(Normalize(live).Object, Normalize(dry).Object)
}

// Restamped reports whether applying would change only the Stamps (a new
// commit that leaves the object as it is): the controller still writes, so
// the object records the revision it was applied from.
func Restamped(live, dry *unstructured.Unstructured) bool {
	la, da := live.GetAnnotations(), dry.GetAnnotations()
	for _, k := range Stamps {
		if la[k] != da[k] {
			return true
		}
	}
	return false
}
