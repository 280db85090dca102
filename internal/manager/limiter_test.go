/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests that the controller's client-side rate limiter follows the API server's
// priority and fairness.

package manager

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/rest"
)

// TestLimiterFollowsAPF: against a real kube-apiserver (which has
// API Priority and Fairness), the controller runs without a client-side
// limiter unless --kube-api-qps is given.
func TestLimiterFollowsAPF(t *testing.T) {
	env := cluster(t)
	cfg := rest.CopyConfig(env.Config)
	Limiter(cfg, nil, nil).Apply(cfg)
	assert.Less(t, cfg.QPS, float32(0), "no client-side limiter")

	qps := float32(20)
	Limiter(cfg, &qps, nil).Apply(cfg)
	assert.Equal(t, float32(20), cfg.QPS)
	assert.Equal(t, 300, cfg.Burst)
}
