/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func secret(ns, name string, stringData map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"stringData": stringData,
	}}
}

func TestSecretWithStringDataIsIdleOnReapply(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	set := []*unstructured.Unstructured{secret(ns, "creds", map[string]any{"password": "s3cr3t"})}
	mustApply(t, a, set, Options{Source: source(ns)})
	count.reset()
	res := mustApply(t, a, set, Options{Source: source(ns)})
	wantActions(t, res, map[string]string{"Secret/" + ns + "/creds": ActionUnchanged})
	if w := count.writes.Load(); w != 0 {
		t.Errorf("idle apply of a secret made %d writes", w)
	}
}

func TestRejectedSecretErrorHasNoValue(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	bad := secret(ns, "creds", map[string]any{"bad key!": "s3cr3t-value"})
	_, err := a.Apply(context.Background(), []*unstructured.Unstructured{bad}, Options{Source: source(ns)})
	wantErrorContains(t, err, "Secret/"+ns+"/creds")
	if strings.Contains(err.Error(), "s3cr3t-value") {
		t.Errorf("error leaks secret data: %v", err)
	}
}
