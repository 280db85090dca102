/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// `reconcile --wait` is done once the controller handled a request made
// at or after its own: here every request the command makes lands
// replaced by a later one, as when a push webhook overwrites the
// annotation before the controller reads it. The command does not wait
// out its timeout (exit 4): the real controller handles the later request
// (the repository does not exist: not ready, exit 3).
func TestReconcileWaitAcceptsALaterHandledRequest(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "jobs", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file:///nonexistent/jobs.git", Interval: &metav1.Duration{Duration: time.Hour}}}
	require.NoError(t, env.Client.Create(t.Context(), gr))
	kubeconfig := laterRequestsProxy(t, env.Config)

	start := time.Now()
	res := runCLI(t, "reconcile", "gitrepository", "jobs", "--wait", "--timeout", "20s", "-n", ns, "--kubeconfig", kubeconfig)
	assert.Equal(t, exitFailed, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, lastLine(res.stdout), "gitrepository "+ns+"/jobs: not ready")
	assert.Less(t, time.Since(start), 20*time.Second, "it did not wait out its timeout")
}

// laterRequestsProxy serves the API server through a proxy that moves
// every reconcile request a PATCH makes one second later, and returns a
// kubeconfig for it.
func laterRequestsProxy(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	transport, err := rest.TransportFor(cfg)
	require.NoError(t, err)
	token := regexp.MustCompile(`("` + regexp.QuoteMeta(v1alpha1.ReconcileRequestedAtAnnotation) + `":")([^"]+)"`)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/gitrepositories/") {
			body, _ := io.ReadAll(r.Body)
			body = token.ReplaceAllFunc(body, func(m []byte) []byte {
				at, err := time.Parse(time.RFC3339Nano, string(token.FindSubmatch(m)[2]))
				require.NoError(t, err)
				return []byte(`"` + v1alpha1.ReconcileRequestedAtAnnotation + `":"` + at.Add(time.Second).Format(time.RFC3339Nano) + `"`)
			})
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return path
}

// A request handled before the command made its own is not its answer,
// even when its time is later than the command's (a clock ahead of the
// command's wrote it): `reconcile --wait` returns only once the controller
// has handled the command's own request.
func TestReconcileWaitIgnoresARequestHandledBeforeItsOwn(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	ahead := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "jobs", Namespace: ns,
		Annotations: map[string]string{v1alpha1.ReconcileRequestedAtAnnotation: ahead}},
		Spec: v1alpha1.GitRepositorySpec{URL: "file:///nonexistent/jobs.git", Interval: &metav1.Duration{Duration: time.Hour}}}
	require.NoError(t, env.Client.Create(t.Context(), gr))
	key := client.ObjectKeyFromObject(gr)
	require.Eventually(t, func() bool {
		require.NoError(t, env.Client.Get(t.Context(), key, gr))
		return gr.Status.LastHandledReconcileAt == ahead && gitRepositoryStanding(gr).settled
	}, 30*time.Second, 50*time.Millisecond, "the controller handles the first request")

	res := runCLI(t, "reconcile", "gitrepository", "jobs", "--wait", "--timeout", "20s", "-n", ns, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, exitFailed, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	require.NoError(t, env.Client.Get(t.Context(), key, gr))
	assert.NotEqual(t, ahead, gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation], "the command made a request")
	assert.Equal(t, gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation], gr.Status.LastHandledReconcileAt,
		"the command returned after the controller handled its request")
}
