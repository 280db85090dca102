/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// TestReceiverReadsTheWebhookSecretThroughTheMemo: the receiver verifies
// deliveries with the webhook Secret the GitRepository reconciler read
// (remembered for five minutes), so a stream of deliveries sends no
// Secret read to the API server.
func TestReceiverReadsTheWebhookSecretThroughTheMemo(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
	receiver := freeAddress(t)
	mgr, err := reconciletest.Start(cfg, reconciletest.Options{Namespace: ns, Controllers: &reconcile.Options{
		CacheDir: t.TempDir(), Concurrent: 2, AllowInsecureHTTP: true, ReceiverAddress: receiver}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: ns}, StringData: map[string]string{"token": "hook-s3cret"}}))
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.Webhook = &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "hook"}}
	})
	f.waitApplied(rev)
	secretGets := func() int { return len(log.matching("GET /api/v1/namespaces/" + ns + "/secrets/hook?")) }
	readByReconciler := secretGets()
	require.NotZero(t, readByReconciler, "the reconciler read the webhook Secret")

	url := "http://" + receiver + f.get().Status.WebhookPath
	deliver := func(n int) int {
		// A push to another branch: answered 202, no reconcile (which
		// would read the Secret afresh) requested.
		body := fmt.Sprintf(`{"ref":"refs/heads/other","n":%d}`, n)
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-Gitlab-Event", "Push Hook")
		req.Header.Set("X-Gitlab-Token", "hook-s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	n := 0
	eventually(t, ns, "the receiver knows the webhook path", func() bool { n++; return deliver(n) == http.StatusAccepted })
	for range 5 {
		n++
		require.Equal(t, http.StatusAccepted, deliver(n))
	}
	assert.Equal(t, readByReconciler, secretGets(), "no delivery read the Secret from the API server")
}
