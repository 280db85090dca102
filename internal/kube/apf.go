/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package kube holds helpers for talking to the Kubernetes API server.
package kube

import (
	"context"
	"fmt"
	"net/http"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/rest"
)

// apfProbeTimeout bounds the request that detects API Priority and
// Fairness.
const apfProbeTimeout = 10 * time.Second

// APFEnabled reports whether the API server of cfg classifies requests
// with API Priority and Fairness: it then answers every request with the
// flow schema and priority level that admitted it (response headers), and
// protects itself from a busy client better than a client-side token
// bucket could. The probe is one GET of /livez/ping.
func APFEnabled(ctx context.Context, cfg *rest.Config) (bool, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return false, fmt.Errorf("http client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, apfProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/livez/ping", nil)
	if err != nil {
		return false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("probe %s for API Priority and Fairness: %w", cfg.Host, err)
	}
	defer func() { _ = resp.Body.Close() }()
	for _, h := range []string{flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID} {
		if resp.Header.Get(h) != "" {
			return true, nil
		}
	}
	return false, nil
}

// Limiter is the client-side rate limit of the controller's clients.
type Limiter struct {
	// QPS and Burst as in rest.Config; QPS < 0 disables the limiter.
	QPS   float32
	Burst int
	// Why says how the limit was chosen, for the log.
	Why string
}

// Defaults of the client-side limiter when the API server has no API
// Priority and Fairness (Flux's defaults).
const (
	DefaultQPS   = 50
	DefaultBurst = 300
)

// ChooseLimiter picks the client-side limiter: the user's explicit choice,
// else none when the API server has API Priority and Fairness, else
// DefaultQPS/DefaultBurst. A failed probe keeps the limiter.
func ChooseLimiter(ctx context.Context, cfg *rest.Config, qps *float32, burst *int) Limiter {
	if qps != nil {
		b := DefaultBurst
		if burst != nil {
			b = *burst
		}
		return Limiter{QPS: *qps, Burst: b, Why: "set by --kube-api-qps"}
	}
	apf, err := APFEnabled(ctx, cfg)
	switch {
	case err != nil:
		return Limiter{QPS: DefaultQPS, Burst: orDefault(burst), Why: "API Priority and Fairness not detected (" + err.Error() + ")"}
	case apf:
		return Limiter{QPS: -1, Burst: orDefault(burst), Why: "the API server has API Priority and Fairness"}
	}
	return Limiter{QPS: DefaultQPS, Burst: orDefault(burst), Why: "the API server has no API Priority and Fairness"}
}

func orDefault(burst *int) int {
	if burst != nil {
		return *burst
	}
	return DefaultBurst
}

// Apply sets the limiter on cfg.
func (l Limiter) Apply(cfg *rest.Config) {
	cfg.QPS, cfg.Burst = l.QPS, l.Burst
}
