/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

var (
	stateGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "bggitops_flinkbluegreendeployment_state",
		Help: "1 for the current blue/green state of each FlinkBlueGreenDeployment, 0 for the others.",
	}, []string{"namespace", "name", "state"})
	transitionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bggitops_flinkbluegreendeployment_transition_duration_seconds",
		Help:    "Time from the start of a blue/green transition to the new colour being active.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{"namespace", "name"})
	abortsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bggitops_flinkbluegreendeployment_aborts_total",
		Help: "Blue/green transitions aborted, with the old colour kept active.",
	}, []string{"namespace", "name"})
)

func init() {
	metrics.Registry.MustRegister(stateGauge, transitionSeconds, abortsTotal)
}

// observeMetrics records the state, finished transitions and aborts of one decision.
func observeMetrics(p *v1alpha1.FlinkBlueGreenDeployment, dec bluegreen.Decision, now time.Time) {
	for _, s := range v1alpha1.BlueGreenStates() {
		v := 0.0
		if dec.Status.BlueGreenState == s {
			v = 1
		}
		stateGauge.WithLabelValues(p.Namespace, p.Name, string(s)).Set(v)
	}
	for _, e := range dec.Events {
		if e.Reason == "Aborted" {
			abortsTotal.WithLabelValues(p.Namespace, p.Name).Inc()
		}
	}
	start := p.Status.TransitionStartTime
	if start != nil && p.Status.BlueGreenState.Transitioning() && dec.Status.BlueGreenState.Active() && dec.Status.JobStatus.State == v1alpha1.JobRunning {
		transitionSeconds.WithLabelValues(p.Namespace, p.Name).Observe(now.Sub(start.Time).Seconds())
	}
}
