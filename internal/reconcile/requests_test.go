/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// reconcileRequests counts the requests sent through it, by method and path.
type reconcileRequests struct {
	next http.RoundTripper
	n    atomic.Int64
	mu   sync.Mutex
	seen []string
}

func (l *reconcileRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	l.n.Add(1)
	l.mu.Lock()
	l.seen = append(l.seen, r.Method+" "+r.URL.Path)
	l.mu.Unlock()
	return l.next.RoundTrip(r)
}

func (l *reconcileRequests) reset() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.seen
	l.seen = nil
	l.n.Store(0)
	return seen
}

// cacheReads serves GitRepositories as the manager's cache does, without
// a request; everything else goes to the API server.
type cacheReads struct{ client.Client }

func (c cacheReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1alpha1.GitRepository); ok {
		return env.Client.Get(ctx, key, obj, opts...)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func getGR(t *testing.T, gr *v1alpha1.GitRepository) *v1alpha1.GitRepository {
	out := &v1alpha1.GitRepository{}
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKeyFromObject(gr), out))
	return out
}

// eventCount counts the events a reconcile emits.
type eventCount struct{ n atomic.Int64 }

func (e *eventCount) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {
	e.n.Add(1)
}

// TestRequestsPerReconcile: creating a GitRepository of 3 objects costs a
// dry-run and an apply per object, one status write and one event; a no-op
// poll one dry-run per object. The Secrets of the namespace (git
// credentials, webhook token), read by a first GitRepository, are not read
// again within their TTL.
func TestRequestsPerReconcile(t *testing.T) {
	ns := newNamespace(t)
	log := &reconcileRequests{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
	counted, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	require.NoError(t, err)
	r, err := reconcile.NewDirectGitRepositoryReconciler(cfg, testenv.Scheme(), cacheReads{counted}, counted, t.TempDir())
	require.NoError(t, err)
	events := &eventCount{}
	r.Recorder = events
	r.Tenancy = reconcile.Tenancy{ClusterWideNamespaces: []string{ns}} // "second" applies into another namespace

	f := newGitFixture(t, ns)
	f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml, b.yaml, c.yaml"),
		"a.yaml":             fmt.Sprintf(configMap, "a", "1"),
		"b.yaml":             fmt.Sprintf(configMap, "b", "1"),
		"c.yaml":             fmt.Sprintf(configMap, "c", "1"),
	})
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: ns},
		StringData: map[string]string{"token": "t0k3n"}}))
	webhook := func(gr *v1alpha1.GitRepository) {
		gr.Spec.Webhook = &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "hook"}}
	}
	f.create("s3cr3t-pass", webhook) // "flink", the namespace's first
	_, err = r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "flink"}})
	require.NoError(t, err)

	// A second GitRepository of the same repository, with the same
	// Secrets, into a namespace of its own (3 objects to create).
	target := newNamespace(t)
	gr := f.get().DeepCopy()
	gr.ObjectMeta = metav1.ObjectMeta{Name: "second", Namespace: ns}
	gr.Spec.TargetNamespace = target
	gr.Status = v1alpha1.GitRepositoryStatus{}
	require.NoError(t, env.Client.Create(t.Context(), gr))
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(gr)}
	log.reset()
	events.n.Store(0)
	_, err = r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	seen := log.reset()
	require.True(t, meta.IsStatusConditionTrue(getGR(t, gr).Status.Conditions, v1alpha1.ReadyCondition), "applied")
	t.Logf("creation: %d requests %v and %d events", len(seen), seen, events.n.Load())
	assert.LessOrEqual(t, len(seen)+int(events.n.Load()), 8, "creation")
	assert.Equal(t, int64(1), events.n.Load(), "one event")
	applied := &corev1.ConfigMapList{}
	require.NoError(t, env.Client.List(t.Context(), applied, client.InNamespace(target)))
	assert.Len(t, applied.Items, 3)

	// A no-op poll: one dry-run per object, nothing else.
	events.n.Store(0)
	_, err = r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	seen = log.reset()
	t.Logf("no-op: %d requests %v", len(seen), seen)
	assert.LessOrEqual(t, len(seen), 3, "no-op")
	assert.Zero(t, events.n.Load())
}
