/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// hangingGitServer never answers a fetch; hung counts the fetches it holds
// per namespace (the first path element of the repository URL).
type hangingGitServer struct {
	*httptest.Server
	mu   sync.Mutex
	hung map[string]int
}

func newHangingGitServer(t *testing.T) *hangingGitServer {
	s := &hangingGitServer{hung: map[string]int{}}
	unblock := make(chan struct{})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		s.add(ns, 1)
		defer s.add(ns, -1)
		select {
		case <-unblock:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(unblock) })
	return s
}

func (s *hangingGitServer) add(ns string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hung[ns] += n
}

func (s *hangingGitServer) holding(ns string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hung[ns]
}

// createHanging creates n GitRepositories in ns whose fetches hang for
// five minutes.
func createHanging(t *testing.T, s *hangingGitServer, ns string, n int) {
	for i := range n {
		require.NoError(t, env.Client.Create(context.Background(), &v1alpha1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hang-%d", i), Namespace: ns},
			Spec: v1alpha1.GitRepositorySpec{URL: s.URL + "/" + ns + "/repo.git", Path: ".", TargetNamespace: ns,
				Interval: &metav1.Duration{Duration: time.Hour}, Timeout: &metav1.Duration{Duration: 5 * time.Minute}},
		}))
	}
}

// TestEveryWaitingNamespaceGetsAWorker: two namespaces whose
// GitRepositories all hang and a third with one that works are queued at
// once (a controller starting, or taking over as leader); the workers are
// shared one per namespace, so the third's repository is applied while
// the others hang, whichever namespace's objects the caches deliver first.
func TestEveryWaitingNamespaceGetsAWorker(t *testing.T) {
	hostileA, hostileB, other := newNamespace(t), newNamespace(t), newNamespace(t)
	s := newHangingGitServer(t)
	createHanging(t, s, hostileA, 5)
	createHanging(t, s, hostileB, 5)
	f := newGitFixture(t, other)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")

	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: hostileA, Namespaces: []string{hostileB, other},
		Controllers: &reconcile.Options{CacheDir: t.TempDir(), Concurrent: 4, AllowInsecureHTTP: true}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)

	f.waitApplied(rev)
	eventually(t, other, "both hostile namespaces hanging", func() bool {
		return s.holding(hostileA) > 0 && s.holding(hostileB) > 0
	})
	assert.Less(t, s.holding(hostileA)+s.holding(hostileB), 4, "a worker stays free for other namespaces")
}
