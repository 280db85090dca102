/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// live_test.go: Compare's dry-run of objects the cluster cannot judge
// alone: a namespace that does not exist, a kind the head's CRD adds, and
// what the controller's apply refuses whatever the API server says.

package prplan_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
)

// An object in a namespace that neither exists nor comes with the head is
// refused, as the controller's dry-run refuses it; one whose namespace the
// head creates is new.
func TestAnObjectInANamespaceThatDoesNotExistIsRefused(t *testing.T) {
	r := plan(t, prplan.Input{}, object(t, configMap("no-such-namespace-x1", "settings")))
	require.Len(t, r.Refused, 1, "plan: %s", r.Summary())
	assert.Equal(t, "namespace no-such-namespace-x1 does not exist", r.Refused[0].Reason)

	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "no-such-namespace-x2"}}
	r = plan(t, prplan.Input{}, object(t, ns), object(t, configMap("no-such-namespace-x2", "settings")))
	assert.Empty(t, r.Refused, "the head creates it")
	assert.Equal(t, 2, r.Report.Summary.Added, r.Summary())
}

// A head that adds a CRD and an object of its kind: the controller applies
// the CRD first and dry-runs the rest after (apply/stage.go deferred); the
// plan shows the object added, not checked, and does not fail.
func TestAnObjectOfAKindTheHeadsCRDAddsIsAddedNotChecked(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.rev38.example.com"},
		"spec": map[string]any{"group": "rev38.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rev38.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"}}}
	r, err := prplan.Plan(context.Background(), prplan.Input{Head: []*unstructured.Unstructured{crd, w},
		Applier: env.Client, Reader: env.Client, Now: time.Now(), HeadRevision: "refs/pull/7/head@sha1:" + strings.Repeat("7", 40)})
	if assert.NoError(t, err) {
		assert.Equal(t, []prplan.Refusal{{Object: "Widget default/w", Reason: "added, not checked (its CRD comes with this change)"}}, r.Unchecked)
		assert.Equal(t, 2, r.Report.Summary.Added, r.Summary())
	}
}

// The controller (apply.ownedElsewhere) refuses to change an object stamped
// with another GitRepository's source, or one made by hand without
// bggitops.dev/adopt: the plan refuses both with the controller's reason
// (apply.OwnedElsewhere).
func TestAnObjectOwnedElsewhereIsRefusedAsTheControllerRefusesIt(t *testing.T) {
	ctx := context.Background()
	ns := reconcileNS(t)
	theirs := configMap(ns, "theirs")
	theirs.Annotations = map[string]string{v1alpha1.SourceAnnotation: ns + "/other"}
	require.NoError(t, env.Client.Create(ctx, theirs))
	handmade := configMap(ns, "handmade")
	require.NoError(t, env.Client.Create(ctx, handmade))
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jobs"}}
	gr.Status.Inventory = &v1alpha1.Inventory{}

	var head []*unstructured.Unstructured
	for _, name := range []string{"theirs", "handmade"} {
		cm := configMap(ns, name)
		cm.Data = map[string]string{"k": "changed by the PR"}
		cm.Annotations = map[string]string{v1alpha1.SourceAnnotation: ns + "/jobs"}
		head = append(head, object(t, cm))
	}
	r := plan(t, prplan.Input{GitRepository: gr}, head...)

	require.Len(t, r.Refused, 2, "the controller refuses both (not created by this GitRepository); plan: %s", r.Summary())
	assert.Contains(t, r.Refused[0].Reason, "it belongs to GitRepository "+ns+"/other")
	assert.Contains(t, r.Refused[1].Reason, "made by hand or by another tool")
	assert.Equal(t, v1alpha1.PlanFailed, r.Outcome(), r.Summary())
}

// apply.confine never applies a ServiceAccount token Secret, whatever the
// API server's dry-run says: the plan refuses it (apply.TokenSecret).
func TestAServiceAccountTokenSecretIsRefused(t *testing.T) {
	ns := reconcileNS(t)
	s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tok", Annotations: map[string]string{
			"kubernetes.io/service-account.name": "default", v1alpha1.SourceAnnotation: ns + "/jobs"}},
		Type: corev1.SecretTypeServiceAccountToken}
	r := plan(t, prplan.Input{}, object(t, s))
	assert.Len(t, r.Refused, 1, "the controller never applies it (ErrTokenSecret); plan: %s", r.Summary())
}
