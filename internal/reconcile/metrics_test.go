/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// TestMetricsFollowDecisions reads the package's global metrics: it uses
// an object name of its own and compares counts before and after, so it
// holds in any test order and with -count=N.
func TestMetricsFollowDecisions(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	p.Namespace, p.Name = "metrics-test", "orders"
	transitions := func() uint64 { return histogramCount(t, transitionSeconds.WithLabelValues(p.Namespace, p.Name)) }
	aborts := func() float64 { return testutil.ToFloat64(abortsTotal.WithLabelValues(p.Namespace, p.Name)) }
	transitionsBefore, abortsBefore := transitions(), aborts()
	p.Status.BlueGreenState = v1alpha1.TransitioningToGreen
	p.Status.TransitionStartTime = &metav1.Time{Time: now.Add(-90 * time.Second)}

	done := bluegreen.Decision{Status: v1alpha1.FlinkBlueGreenDeploymentStatus{
		BlueGreenState: v1alpha1.ActiveGreen, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}}}
	observeMetrics(p, done, now)
	assert.Equal(t, 1.0, testutil.ToFloat64(stateGauge.WithLabelValues(p.Namespace, p.Name, "ACTIVE_GREEN")))
	assert.Equal(t, 0.0, testutil.ToFloat64(stateGauge.WithLabelValues(p.Namespace, p.Name, "TRANSITIONING_TO_GREEN")))
	assert.Equal(t, transitionsBefore+1, transitions(), "one finished transition observed")

	aborted := bluegreen.Decision{
		Status: v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}},
		Events: []bluegreen.Event{{Warning: true, Reason: "Aborted"}},
	}
	observeMetrics(p, aborted, now)
	assert.Equal(t, abortsBefore+1, aborts())
	assert.Equal(t, transitionsBefore+1, transitions(), "an abort is not a finished transition")
}

func histogramCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	m := &dto.Metric{}
	require.NoError(t, o.(prometheus.Metric).Write(m))
	return m.GetHistogram().GetSampleCount()
}
