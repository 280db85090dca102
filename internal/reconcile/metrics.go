/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// metrics.go: the Prometheus metrics of the reconcilers, their buckets and
// labels, registered with controller-runtime's registry.

package reconcile

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The controller's metrics, served with controller-runtime's on /metrics.
// Every series that names an object (namespace, name, and kind where both
// kinds share a metric) is deleted with the object (forgetMetrics), so a
// deleted object leaves no series behind. docs/operations/metrics-and-alerts.md
// lists them;
// config/prometheus alerts on them and config/grafana charts them.

// Buckets. A rollout's worst case in the production example is about 52
// minutes (a savepoint, a slow start, the abort grace period): the
// transition buckets reach 4 hours.
var (
	reconcileBuckets  = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	savepointBuckets  = []float64{1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600}
	transitionBuckets = []float64{5, 10, 30, 60, 120, 300, 600, 1200, 1800, 2700, 3600, 7200, 14400}
)

// Labels of an object.
var (
	objectLabels = []string{"kind", "namespace", "name"}
	ownLabels    = []string{"namespace", "name"}
)

var (
	reconcileSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bggitops_reconcile_duration_seconds",
		Help:    "Time one reconcile of an object takes (fetch, render, apply, decision and commit statuses included).",
		Buckets: reconcileBuckets,
	}, objectLabels)
	resourceInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "bggitops_resource_info",
		Help: "1 per object: its Ready condition's status and reason, whether it is Stalled, whether it is suspended, " +
			"and whether its commit statuses fail (the CommitStatusFailed condition).",
	}, slices.Concat(objectLabels, []string{"ready", "reason", "stalled", "suspended", "commit_status_failed"}))
	lastApplied = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "bggitops_last_applied_timestamp_seconds",
		Help: "GitRepository: last apply of its revision that succeeded (every poll applies). " +
			"FlinkBlueGreenDeployment: end of its last successful rollout (status.history).",
	}, objectLabels)
	stateGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "bggitops_flinkbluegreendeployment_state",
		Help: "1 for the current blue/green state of each FlinkBlueGreenDeployment, 0 for the others.",
	}, slices.Concat(ownLabels, []string{"state"}))
	transitionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bggitops_flinkbluegreendeployment_transition_duration_seconds",
		Help:    "Duration of each finished rollout (status.history startedAt to finishedAt), by its kind and outcome.",
		Buckets: transitionBuckets,
	}, slices.Concat(ownLabels, []string{"rollout_kind", "outcome"}))
	rolloutStart = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "bggitops_flinkbluegreendeployment_rollout_start_timestamp_seconds",
		Help: "Start of the rollout in progress (status.history), 0 when none is.",
	}, ownLabels)
	savepointSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bggitops_flinkbluegreendeployment_savepoint_duration_seconds",
		Help:    "Time from requesting the savepoint of a blue/green transition to its completion.",
		Buckets: savepointBuckets,
	}, ownLabels)
	lastAbort = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "bggitops_flinkbluegreendeployment_last_abort_timestamp_seconds",
		Help: "End of the last aborted rollout (status.history), 0 when none is recorded: unlike the aborts counter, " +
			"a controller that starts after the abort still shows it.",
	}, ownLabels)
	abortsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bggitops_flinkbluegreendeployment_aborts_total",
		Help: "Blue/green transitions aborted (deadline passed or abort requested), with the old colour kept active.",
	}, ownLabels)
	commitStatusTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bggitops_commit_status_requests_total",
		Help: "Rounds of commit-status calls to a forge, by the GitRepository whose forge and token they use, " +
			"provider and result (Succeeded, or the reason of the CommitStatusFailed condition).",
	}, slices.Concat(ownLabels, []string{"provider", "result"}))
	webhookTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bggitops_webhook_requests_total",
		Help: "Requests to the push webhook receiver, by result (Requested, Ignored, Unauthorized, NotFound, Rejected, Error).",
	}, []string{"result"})
)

// collectors are registered with controller-runtime's registry.
var collectors = []prometheus.Collector{reconcileSeconds, resourceInfo, lastApplied, stateGauge, transitionSeconds,
	rolloutStart, savepointSeconds, lastAbort, abortsTotal, commitStatusTotal, webhookTotal}

func init() { metrics.Registry.MustRegister(collectors...) }
