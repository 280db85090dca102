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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

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

// fairLabel marks the GitRepositories of one test, the only ones its
// controller sees.
const fairLabel = "bggitops.dev/fair-shares-test"

// orderedNamespaces creates n namespaces whose names sort in the order
// they are returned (the order a cluster-wide informer lists their
// objects in).
func orderedNamespaces(t *testing.T, n int) []string {
	var out []string
	for i := range n {
		ns := fmt.Sprintf("fair-%c-%d", 'a'+i, time.Now().UnixNano())
		require.NoError(t, env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		reconciletest.WatchKstatus(t, env.Config, ns)
		out = append(out, ns)
	}
	return out
}

// createHanging creates n GitRepositories in ns whose fetches hang for
// five minutes.
func createHanging(t *testing.T, s *hangingGitServer, ns, test string, n int) {
	for i := range n {
		require.NoError(t, env.Client.Create(context.Background(), &v1alpha1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hang-%d", i), Namespace: ns, Labels: map[string]string{fairLabel: test}},
			Spec: v1alpha1.GitRepositorySpec{URL: s.URL + "/" + ns + "/repo.git", Path: ".", TargetNamespace: ns,
				Interval: &metav1.Duration{Duration: time.Hour}, Timeout: &metav1.Duration{Duration: 5 * time.Minute}},
		}))
	}
}

// TestEveryWaitingNamespaceGetsAWorker: two namespaces whose
// GitRepositories all hang and a third with one that works, listed in
// that order, are queued at once (a controller starting, or taking over
// as leader). With four workers the first namespace would take three and
// the second the last; shared one per waiting namespace, the third's
// repository is applied while the others hang, and the first never holds
// more than two.
func TestEveryWaitingNamespaceGetsAWorker(t *testing.T) {
	nss := orderedNamespaces(t, 3)
	hostileA, hostileB, other := nss[0], nss[1], nss[2]
	test := strings.TrimPrefix(other, "fair-c-")
	s := newHangingGitServer(t)
	createHanging(t, s, hostileA, test, 5)
	createHanging(t, s, hostileB, test, 5)
	f := newGitFixture(t, other)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Labels = map[string]string{fairLabel: test} })

	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Selected: labels.SelectorFromSet(labels.Set{fairLabel: test}),
		Controllers: &reconcile.Options{CacheDir: t.TempDir(), Concurrent: 4, AllowInsecureHTTP: true}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)

	f.waitApplied(rev)
	eventually(t, other, "both hostile namespaces hanging", func() bool {
		return s.holding(hostileA) > 0 && s.holding(hostileB) > 0
	})
	assert.LessOrEqual(t, s.holding(hostileA), 2, "the first namespace holds no more than its share")
}
