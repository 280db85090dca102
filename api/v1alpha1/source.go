/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// source.go: SourceValue and AppliedBy, which write and read the
// SourceAnnotation naming the GitRepository that applied an object.

package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SourceValue is the SourceAnnotation value that names gr.
func (gr *GitRepository) SourceValue() string { return gr.Namespace + "/" + gr.Name }

// AppliedBy returns the GitRepository that applied obj, read from its
// SourceAnnotation; false when obj carries none (or a malformed one).
func AppliedBy(obj metav1.Object) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(obj.GetAnnotations()[SourceAnnotation], "/")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}
