/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkRecorder is an Options.Check that records the objects it saw and
// fails those named in fail.
type checkRecorder struct {
	mu   sync.Mutex
	seen []string
	fail map[string]error
}

func (r *checkRecorder) check(_ context.Context, _ client.Client, obj *unstructured.Unstructured) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, obj.GetName())
	return r.fail[obj.GetName()]
}

func TestCheckRejectionAppliesNothing(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	rec := &checkRecorder{fail: map[string]error{
		"bad": &RejectedError{Err: errors.New("its child would be rejected: spec.cpu: must be a number")},
	}}
	o := Options{Source: source(ns), Check: rec.check}
	count.reset()
	_, err := a.Apply(context.Background(), []*unstructured.Unstructured{
		configMap(ns, "good", map[string]any{"k": "1"}), configMap(ns, "bad", map[string]any{"k": "1"}),
	}, o)
	wantErrorContains(t, err, "nothing applied", "ConfigMap/"+ns+"/bad: its child would be rejected: spec.cpu")
	if oe := ObjectErrors(err); len(oe) != 1 || oe[0].ID != "ConfigMap/"+ns+"/bad" {
		t.Errorf("object errors = %v, want the rejected configmap", oe)
	}
	if w := count.writes.Load(); w != 0 {
		t.Errorf("rejected apply made %d writes", w)
	}
	if _, ok := getConfigMap(t, ns, "good"); ok {
		t.Error("configmap was created although the set was rejected")
	}
}

func TestCheckTransientErrorIsNotAnObjectError(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	rec := &checkRecorder{fail: map[string]error{"cm": errors.New("connection refused")}}
	o := Options{Source: source(ns), Check: rec.check}
	count.reset()
	_, err := a.Apply(context.Background(), []*unstructured.Unstructured{configMap(ns, "cm", nil)}, o)
	wantErrorContains(t, err, "check ConfigMap/"+ns+"/cm: connection refused")
	if oe := ObjectErrors(err); len(oe) != 0 {
		t.Errorf("object errors = %v, want none (transient)", oe)
	}
	if w := count.writes.Load(); w != 0 {
		t.Errorf("failed apply made %d writes", w)
	}
}

func TestCheckSkipsUnchangedObjects(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	rec := &checkRecorder{}
	o := Options{Source: source(ns), Check: rec.check}
	set := []*unstructured.Unstructured{configMap(ns, "a", nil), configMap(ns, "b", nil)}
	mustApply(t, a, set, o)
	if len(rec.seen) != 2 {
		t.Fatalf("checked %v on create, want a and b", rec.seen)
	}
	rec.seen = nil
	mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "a", nil), configMap(ns, "b", map[string]any{"k": "2"})}, o)
	if len(rec.seen) != 1 || rec.seen[0] != "b" {
		t.Errorf("checked %v, want only the changed b", rec.seen)
	}
}

func TestCheckRunsAsTheServiceAccount(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	sa := serviceAccountForConfigMaps(t, ns)
	var user string
	check := func(ctx context.Context, c client.Client, _ *unstructured.Unstructured) error {
		review := &authenticationv1.SelfSubjectReview{}
		if err := c.Create(ctx, review); err != nil {
			return err
		}
		user = review.Status.UserInfo.Username
		return nil
	}
	o := Options{ServiceAccountName: sa, Namespace: ns, Source: source(ns), Check: check}
	mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "cm", nil)}, o)
	if want := "system:serviceaccount:" + ns + ":" + sa; user != want {
		t.Errorf("check ran as %q, want %q", user, want)
	}
}
