/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start(testenv.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start test environment:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop test environment:", err)
	}
	os.Exit(code)
}

// counter counts the requests an Applier sends: all of them, and writes
// (anything but GET, HEAD and OPTIONS that is not a dry-run).
type counter struct{ total, writes atomic.Int64 }

type countingTransport struct {
	rt http.RoundTripper
	c  *counter
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.total.Add(1)
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if req.URL.Query().Get("dryRun") != "All" {
			t.c.writes.Add(1)
		}
	}
	return t.rt.RoundTrip(req)
}

func (c *counter) reset() { c.total.Store(0); c.writes.Store(0) }

// newApplier returns an Applier whose requests (also impersonated ones) are
// counted.
func newApplier(tb testing.TB) (*Applier, *counter) {
	tb.Helper()
	c := &counter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &countingTransport{rt: rt, c: c} })
	a, err := NewApplier(cfg, testenv.Scheme())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(a.Close)
	return a, c
}

var nsSeq atomic.Int64

// newNamespace creates a namespace for one test.
func newNamespace(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("apply-%d-%d", os.Getpid()%10000, nsSeq.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		tb.Fatal(err)
	}
	return name
}

func configMap(ns, name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"data":       data,
	}}
}

func annotate(obj *unstructured.Unstructured, kv ...string) *unstructured.Unstructured {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		ann[kv[i]] = kv[i+1]
	}
	obj.SetAnnotations(ann)
	return obj
}

func source(ns string) string { return ns + "/repo" }

func mustApply(t *testing.T, a *Applier, objs []*unstructured.Unstructured, o Options) Result {
	t.Helper()
	res, err := a.Apply(context.Background(), objs, o)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return res
}

func actions(res Result) map[string]string {
	out := map[string]string{}
	for _, c := range res.Changes {
		out[c.ID] = c.Action
	}
	return out
}

func wantActions(t *testing.T, res Result, want map[string]string) {
	t.Helper()
	got := actions(res)
	if len(got) != len(want) {
		t.Errorf("changes = %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: action %q, want %q (all: %v)", id, got[id], w, got)
		}
	}
}

func getConfigMap(t *testing.T, ns, name string) (*corev1.ConfigMap, bool) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm, true
}

func wantErrorContains(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	t.Logf("error: %v", err)
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

// toUnstructured converts a typed object for an apply by another manager.
func toUnstructured(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: m}
}
