/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of the controller's metrics endpoint: served only to callers the API
// server authenticates and authorizes; its decision cache.

package manager

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// TestSecureMetrics: with --metrics-secure the metrics endpoint speaks
// HTTPS and serves only a caller whose token the API server authenticates
// and who may GET /metrics (config/rbac's metrics reader role); the
// controller asks with the rights of the generated manager role. Without
// the flag it serves plain HTTP, as tests and the demo use it.
func TestSecureMetrics(t *testing.T) {
	env, err := testenv.Start(testenv.Options{WithoutFlinkCRDs: true})
	testenv.Require(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()

	// The controller, as config/rbac grants it; a scraper bound to the
	// metrics reader role; a stranger with a valid token and no grant.
	for _, file := range []string{"role.yaml", "metrics_reader_role.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", file))
		require.NoError(t, err)
		role := &rbacv1.ClusterRole{}
		require.NoError(t, yaml.Unmarshal(data, role))
		require.NoError(t, env.Client.Create(ctx, role))
	}
	controller, err := env.AddUser("bg-gitops-controller")
	require.NoError(t, err)
	bind := func(name, role string, subject rbacv1.Subject) {
		require.NoError(t, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{subject}}))
	}
	bind("controller", "bg-gitops-manager", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bg-gitops-controller"})
	bind("scraper", "bg-gitops-metrics-reader", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "scraper"})
	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		require.NoError(t, env.Client.Create(ctx, sa))
		tr := &authenticationv1.TokenRequest{}
		require.NoError(t, env.Client.SubResource("token").Create(ctx, sa, tr))
		return tr.Status.Token
	}
	scraper, stranger := token("scraper"), token("stranger")

	addr := freeAddress(t)
	httpClient, err := rest.HTTPClientFor(controller)
	require.NoError(t, err)
	srv, err := metricsserver.NewServer(metricsOptions(addr, true, t.TempDir()), controller, httpClient)
	require.NoError(t, err)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Start(sctx) }()
	t.Cleanup(func() { cancel(); <-done })

	insecureTLS := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a self-signed test certificate
	get := func(url, token string) int {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := insecureTLS.Do(req)
		if err != nil {
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Eventually(t, func() bool { return get("https://"+addr+"/metrics", "") != 0 }, 10*time.Second, 50*time.Millisecond)

	assert.Equal(t, http.StatusUnauthorized, get("https://"+addr+"/metrics", ""), "no token")
	assert.Equal(t, http.StatusUnauthorized, get("https://"+addr+"/metrics", "not-a-token"), "a token the API server does not know")
	assert.Equal(t, http.StatusForbidden, get("https://"+addr+"/metrics", stranger), "authenticated, not allowed")
	assert.Equal(t, http.StatusOK, get("https://"+addr+"/metrics", scraper), "the metrics reader")
	assert.Equal(t, http.StatusOK, get("https://"+addr+"/metrics", scraper), "the metrics reader, decision cached")
	assert.NotEqual(t, http.StatusOK, get("http://"+addr+"/metrics", scraper), "no plain HTTP")

	plain := metricsOptions("127.0.0.1:0", false, "")
	assert.False(t, plain.SecureServing)
	assert.Nil(t, plain.FilterProvider)
}

// TestMetricsDecisionCacheKeepsLiveDecisions: a flood of new tokens does
// not push out decisions that have not expired (Prometheus's allow);
// expired ones make room.
func TestMetricsDecisionCacheKeepsLiveDecisions(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	g := &metricsGuard{}
	key := func(i int) [sha256.Size]byte { return sha256.Sum256([]byte(fmt.Sprint(i))) }
	live := metricsDecision{code: http.StatusOK, expires: now.Add(time.Minute)}
	for i := range metricsCacheSize {
		g.store(key(i), live, now)
	}
	g.store(key(-1), metricsDecision{code: http.StatusUnauthorized, expires: now.Add(time.Second)}, now)
	if _, ok := g.cache[key(-1)]; ok || len(g.cache) != metricsCacheSize {
		t.Fatalf("a full cache of live decisions took a new one (%d entries)", len(g.cache))
	}
	if _, ok := g.cache[key(0)]; !ok {
		t.Fatal("a live decision was evicted")
	}
	later := now.Add(2 * time.Minute)
	g.store(key(-1), metricsDecision{code: http.StatusUnauthorized, expires: later.Add(time.Second)}, later)
	if _, ok := g.cache[key(-1)]; !ok || len(g.cache) != 1 {
		t.Fatalf("expired decisions did not make room: %d entries", len(g.cache))
	}
}
