/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

func TestMetricsFollowDecisions(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	p.Namespace, p.Name = "m", "orders"
	p.Status.BlueGreenState = v1alpha1.TransitioningToGreen
	p.Status.TransitionStartTime = &metav1.Time{Time: now.Add(-90 * time.Second)}

	done := bluegreen.Decision{Status: v1alpha1.FlinkBlueGreenDeploymentStatus{
		BlueGreenState: v1alpha1.ActiveGreen, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}}}
	observeMetrics(p, done, now)
	assert.Equal(t, 1.0, testutil.ToFloat64(stateGauge.WithLabelValues("m", "orders", "ACTIVE_GREEN")))
	assert.Equal(t, 0.0, testutil.ToFloat64(stateGauge.WithLabelValues("m", "orders", "TRANSITIONING_TO_GREEN")))
	assert.Equal(t, 1, testutil.CollectAndCount(transitionSeconds))

	aborted := bluegreen.Decision{
		Status: v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}},
		Events: []bluegreen.Event{{Warning: true, Reason: "Aborted"}},
	}
	observeMetrics(p, aborted, now)
	assert.Equal(t, 1.0, testutil.ToFloat64(abortsTotal.WithLabelValues("m", "orders")))
}
