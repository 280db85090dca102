/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// The detection against a real kube-apiserver is tested where one runs
// (internal/cli, TestControllerLimiterFollowsAPF).

func TestAPFHeadersDetected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Kubernetes-PF-FlowSchema-UID", "f")
		w.Header().Set("X-Kubernetes-PF-PriorityLevel-UID", "p")
	}))
	defer srv.Close()
	ok, err := APFEnabled(context.Background(), &rest.Config{Host: srv.URL})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Less(t, ChooseLimiter(context.Background(), &rest.Config{Host: srv.URL}, nil, nil).QPS, float32(0))
}

func TestLimiterKeptWithoutAPF(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/livez/ping", r.URL.Path)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	ok, err := APFEnabled(context.Background(), cfg)
	require.NoError(t, err)
	assert.False(t, ok)
	l := ChooseLimiter(context.Background(), cfg, nil, nil)
	assert.Equal(t, Limiter{QPS: DefaultQPS, Burst: DefaultBurst, Why: "the API server has no API Priority and Fairness"}, l)

	// An explicit choice wins, a negative QPS included.
	qps, burst := float32(-1), 10
	assert.Equal(t, float32(-1), ChooseLimiter(context.Background(), cfg, &qps, &burst).QPS)
	qps = 20
	assert.Equal(t, Limiter{QPS: 20, Burst: 10, Why: "set by --kube-api-qps"}, ChooseLimiter(context.Background(), cfg, &qps, &burst))

	// A probe that fails keeps the limiter.
	srv.Close()
	l = ChooseLimiter(context.Background(), cfg, nil, nil)
	assert.Equal(t, float32(DefaultQPS), l.QPS)
	assert.Contains(t, l.Why, "not detected")
}
