/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestObjectOfAnotherSourceIsNotTakenOver: a GitRepository cannot take over
// (and so later prune) an object another GitRepository applied, even in
// its own namespace; the object keeps its content and its source.
func TestObjectOfAnotherSourceIsNotTakenOver(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	theirs := Options{Source: ns + "/theirs", Prune: true}
	mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "shared", map[string]any{"k": "theirs"})}, theirs)

	mine := Options{Source: ns + "/mine", Prune: true}
	_, err := a.Apply(context.Background(), []*unstructured.Unstructured{
		configMap(ns, "shared", map[string]any{"k": "mine"}),
		configMap(ns, "other", map[string]any{"k": "mine"}),
	}, mine)
	if !errors.Is(err, ErrOwnedElsewhere) {
		t.Fatalf("err = %v, want ErrOwnedElsewhere", err)
	}
	wantErrorContains(t, err, "ConfigMap/"+ns+"/shared", "belongs to GitRepository "+ns+"/theirs")
	cm, _ := getConfigMap(t, ns, "shared")
	if cm.Data["k"] != "theirs" || cm.Annotations[v1alpha1.SourceAnnotation] != ns+"/theirs" {
		t.Errorf("the object was changed: data %v, source %q", cm.Data, cm.Annotations[v1alpha1.SourceAnnotation])
	}
	if _, ok := getConfigMap(t, ns, "other"); ok {
		t.Error("a refused object in the set applied the rest")
	}
	// Even asking to adopt does not take another repository's object.
	adopting := configMap(ns, "shared", map[string]any{"k": "mine"})
	adopting.SetAnnotations(map[string]string{v1alpha1.AdoptAnnotation: v1alpha1.AdoptEnabledValue})
	if _, err := a.Apply(context.Background(), []*unstructured.Unstructured{adopting}, mine); !errors.Is(err, ErrOwnedElsewhere) {
		t.Fatalf("adopt annotation: err = %v, want ErrOwnedElsewhere", err)
	}
}

// TestUnmanagedObjectIsAdoptedOnlyWhenGitSaysSo: an object made by hand is
// taken over only with bggitops.dev/adopt: enabled on the object in Git;
// from then on it is this repository's (inventory and source).
func TestUnmanagedObjectIsAdoptedOnlyWhenGitSaysSo(t *testing.T) {
	ctx := context.Background()
	a, _ := newApplier(t)
	ns := newNamespace(t)
	byHand := configMap(ns, "by-hand", map[string]any{"k": "hand"})
	if err := env.Client.Create(ctx, byHand); err != nil {
		t.Fatal(err)
	}
	o := Options{Source: source(ns), Prune: true}
	_, err := a.Apply(ctx, []*unstructured.Unstructured{configMap(ns, "by-hand", map[string]any{"k": "git"})}, o)
	if !errors.Is(err, ErrOwnedElsewhere) {
		t.Fatalf("err = %v, want ErrOwnedElsewhere", err)
	}
	wantErrorContains(t, err, "exists without a source", v1alpha1.AdoptAnnotation+": "+v1alpha1.AdoptEnabledValue)
	if cm, _ := getConfigMap(t, ns, "by-hand"); cm.Data["k"] != "hand" {
		t.Fatalf("changed before adoption: %v", cm.Data)
	}

	adopt := configMap(ns, "by-hand", map[string]any{"k": "git"})
	adopt.SetAnnotations(map[string]string{v1alpha1.AdoptAnnotation: v1alpha1.AdoptEnabledValue})
	res := mustApply(t, a, []*unstructured.Unstructured{adopt}, o)
	wantActions(t, res, map[string]string{"ConfigMap/" + ns + "/by-hand": ActionConfigured})
	cm, _ := getConfigMap(t, ns, "by-hand")
	if cm.Data["k"] != "git" || cm.Annotations[v1alpha1.SourceAnnotation] != source(ns) {
		t.Fatalf("not adopted: data %v, annotations %v", cm.Data, cm.Annotations)
	}
	// Adopted, it is ours: a later change needs no annotation.
	o.Inventory = res.Inventory
	mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "by-hand", map[string]any{"k": "git2"})}, o)
}

// TestConfinedApplyStaysInItsNamespace: a confined Apply refuses
// cluster-scoped objects and objects of other namespaces, naming each, and
// writes nothing.
func TestConfinedApplyStaysInItsNamespace(t *testing.T) {
	a, count := newApplier(t)
	ns, other := newNamespace(t), newNamespace(t)
	o := Options{Source: source(ns), Namespace: ns, Confined: true}
	count.reset()
	_, err := a.Apply(context.Background(), []*unstructured.Unstructured{
		configMap(ns, "mine", nil),
		configMap(other, "theirs", nil),
		namespace(ns + "-extra"),
	}, o)
	if !errors.Is(err, ErrOutsideNamespace) {
		t.Fatalf("err = %v, want ErrOutsideNamespace", err)
	}
	wantErrorContains(t, err, "ConfigMap/"+other+"/theirs: outside the GitRepository's namespace: namespace "+other+" is not "+ns,
		"Namespace/"+ns+"-extra: outside the GitRepository's namespace", "--cluster-wide-namespaces")
	if w := count.writes.Load(); w != 0 {
		t.Errorf("%d writes for a refused set", w)
	}
	if _, ok := getConfigMap(t, ns, "mine"); ok {
		t.Error("the valid object of a refused set was applied")
	}
	mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "mine", nil)}, o)
}

// TestServiceAccountTokenSecretIsRefused: a Secret that would make the API
// server mint a token for an account of the namespace is never applied.
func TestServiceAccountTokenSecretIsRefused(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	for name, sec := range map[string]*unstructured.Unstructured{
		"by type": {Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
			"metadata": map[string]any{"name": "tok", "namespace": ns, "annotations": map[string]any{"kubernetes.io/service-account.name": "admin"}}}},
		"by annotation": {Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "tok2", "namespace": ns, "annotations": map[string]any{"kubernetes.io/service-account.name": "admin"}}}},
	} {
		_, err := a.Apply(context.Background(), []*unstructured.Unstructured{sec}, Options{Source: source(ns), Namespace: ns, Confined: true})
		if !errors.Is(err, ErrTokenSecret) {
			t.Errorf("%s: err = %v, want ErrTokenSecret", name, err)
		}
	}
}

// TestSetCRDCannotRescopeAServedKind: a CRD in the set that declares a
// served cluster-scoped kind (ClusterRoleBinding) as namespaced does not
// make that kind pass a confined Apply; neither does the CRD itself.
func TestSetCRDCannotRescopeAServedKind(t *testing.T) {
	ctx := context.Background()
	a, count := newApplier(t)
	ns := newNamespace(t)
	crd := widgetCRD("rbac.authorization.k8s.io")
	crd.SetName("clusterrolebindings.rbac.authorization.k8s.io")
	_ = unstructured.SetNestedField(crd.Object, map[string]any{"kind": "ClusterRoleBinding", "listKind": "ClusterRoleBindingList",
		"plural": "clusterrolebindings", "singular": "clusterrolebinding"}, "spec", "names")
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": ns + "-pwn", "namespace": ns},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}},
	}}
	count.reset()
	_, err := a.Apply(ctx, []*unstructured.Unstructured{crd, binding}, Options{Source: source(ns), Namespace: ns, Confined: true})
	wantErrorContains(t, err, "ClusterRoleBinding/"+ns+"/"+ns+"-pwn: outside the GitRepository's namespace",
		"CustomResourceDefinition/clusterrolebindings.rbac.authorization.k8s.io: outside the GitRepository's namespace")
	if w := count.writes.Load(); w != 0 {
		t.Errorf("%d writes", w)
	}
}
