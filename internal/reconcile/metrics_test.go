/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/status"
)

// The tests of this file read the package's global metrics: each names
// objects of its own (uniqueName), so they hold in any order and with
// -count=N.
var names atomic.Int64

func uniqueName(t *testing.T, kind string) types.NamespacedName {
	id := types.NamespacedName{Namespace: "metrics-unit", Name: fmt.Sprintf("%s-%d", strings.ToLower(t.Name()), names.Add(1))}
	t.Cleanup(func() { forgetMetrics(kind, id) })
	return id
}

// TestMetricsFollowDecisions: a rollout's duration is observed once, when
// its status.history entry ends, by kind and outcome; a decision made
// again on the same status after its write counts nothing more.
func TestMetricsFollowDecisions(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	id := uniqueName(t, v1alpha1.FlinkBlueGreenDeploymentKind)
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name}}
	rollouts := func(kind v1alpha1.RolloutKind, outcome v1alpha1.RolloutOutcome) uint64 {
		return histogramCount(t, transitionSeconds.WithLabelValues(p.Namespace, p.Name, string(kind), string(outcome)))
	}
	aborts := func() float64 { return testutil.ToFloat64(abortsTotal.WithLabelValues(p.Namespace, p.Name)) }
	savepoints := func() uint64 { return histogramCount(t, savepointSeconds.WithLabelValues(p.Namespace, p.Name)) }

	started := metav1.NewTime(now.Add(-52 * time.Minute))
	entry := v1alpha1.RolloutRecord{Revision: "main@sha1:1", Kind: v1alpha1.RolloutBlueGreen, To: "orders-green",
		StartedAt: started, Outcome: v1alpha1.RolloutInProgress}
	prev := v1alpha1.FlinkBlueGreenDeploymentStatus{History: []v1alpha1.RolloutRecord{entry},
		Savepoint: &v1alpha1.SavepointStatus{Name: "sp", TriggerTimestamp: &started}}

	// The savepoint completes: its duration is observed, the rollout goes on.
	next := *prev.DeepCopy()
	next.Savepoint.Path = "/sp/1"
	observeDecision(p, prev, bluegreen.Decision{Status: next}, now)
	assert.Equal(t, uint64(1), savepoints())
	observeDecision(p, next, bluegreen.Decision{Status: next}, now)
	assert.Equal(t, uint64(1), savepoints(), "once")

	done := *next.DeepCopy()
	done.History[0].Outcome, done.History[0].FinishedAt = v1alpha1.RolloutSucceeded, &metav1.Time{Time: now}
	observeDecision(p, next, bluegreen.Decision{Status: done}, now)
	assert.Equal(t, uint64(1), rollouts("BlueGreen", "Succeeded"))
	observeDecision(p, done, bluegreen.Decision{Status: done}, now)
	assert.Equal(t, uint64(1), rollouts("BlueGreen", "Succeeded"), "an entry that ended before is not counted again")
	h := histogram(t, transitionSeconds.WithLabelValues(p.Namespace, p.Name, "BlueGreen", "Succeeded"))
	assert.Equal(t, 52*60.0, h.GetSampleSum())
	assert.Equal(t, uint64(0), h.GetBucket()[9].GetCumulativeCount(), "not within 2700 s")
	assert.Equal(t, uint64(1), h.GetBucket()[10].GetCumulativeCount(), "within 3600 s")

	// An abort: the next rollout begins and is aborted within one decision.
	abortedStatus := *done.DeepCopy()
	second := entry
	second.Revision, second.StartedAt = "main@sha1:2", metav1.NewTime(now)
	second.Outcome, second.FinishedAt = v1alpha1.RolloutAborted, &metav1.Time{Time: now.Add(time.Minute)}
	abortedStatus.History = append(abortedStatus.History, second)
	observeDecision(p, done, bluegreen.Decision{Status: abortedStatus, Events: []bluegreen.Event{{Warning: true, Reason: "Aborted"}}}, now)
	assert.Equal(t, 1.0, aborts())
	assert.Equal(t, uint64(1), rollouts("BlueGreen", "Aborted"))
	assert.Equal(t, uint64(1), rollouts("BlueGreen", "Succeeded"))
}

// TestMetricsForgetDeletesEverySeries: deleting an object deletes every
// series naming it, and only those: a GitRepository and a
// FlinkBlueGreenDeployment of the same name keep each other's.
func TestMetricsForgetDeletesEverySeries(t *testing.T) {
	id := uniqueName(t, v1alpha1.GitRepositoryKind)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name}}
	gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "github"}
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: gr.ObjectMeta}
	p.Status.History = []v1alpha1.RolloutRecord{{Kind: v1alpha1.RolloutFirst, Outcome: v1alpha1.RolloutSucceeded,
		StartedAt: metav1.Now(), FinishedAt: &metav1.Time{Time: time.Now()}}}
	observeRepository(gr, time.Second)
	observeApplied(gr, time.Now())
	countCommitStatus(gr, nil)
	observeDeployment(p, time.Second)
	observeDecision(p, v1alpha1.FlinkBlueGreenDeploymentStatus{}, bluegreen.Decision{Status: p.Status,
		Events: []bluegreen.Event{{Reason: "Aborted"}}}, time.Now())
	// reconcile, info, last applied: 2 each; commit statuses 1; states 7;
	// rollout start, last abort, one rollout and the abort 1 each.
	require.Equal(t, 18, seriesOf(t, id))

	forgetMetrics(v1alpha1.FlinkBlueGreenDeploymentKind, id)
	assert.Equal(t, 4, seriesOf(t, id), "the GitRepository's series are kept")
	forgetMetrics(v1alpha1.GitRepositoryKind, id)
	assert.Zero(t, seriesOf(t, id))
}

// TestMetricsInfoReplacesItsSeries: a change of readiness replaces the
// object's resource_info series.
func TestMetricsInfoReplacesItsSeries(t *testing.T) {
	id := uniqueName(t, v1alpha1.GitRepositoryKind)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name}}
	gr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "FetchFailed"}}
	observeRepository(gr, time.Second)
	gr.Status.Conditions[0].Status, gr.Status.Conditions[0].Reason = metav1.ConditionTrue, "Succeeded"
	observeRepository(gr, time.Second)
	assert.Equal(t, 2, seriesOf(t, id), "reconcile duration and one resource_info")
	assert.Equal(t, 1.0, testutil.ToFloat64(resourceInfo.WithLabelValues(v1alpha1.GitRepositoryKind, id.Namespace, id.Name,
		"True", "Succeeded", "false", "false", "false")))

	// Commit statuses that fail show on it (BgGitopsCommitStatusesFailing).
	gr.Status.Conditions = append(gr.Status.Conditions, metav1.Condition{Type: v1alpha1.CommitStatusFailedCondition,
		Status: metav1.ConditionTrue, Reason: "Unauthorized"})
	observeRepository(gr, time.Second)
	assert.Equal(t, 2, seriesOf(t, id))
	assert.Equal(t, 1.0, testutil.ToFloat64(resourceInfo.WithLabelValues(v1alpha1.GitRepositoryKind, id.Namespace, id.Name,
		"True", "Succeeded", "false", "false", "true")))
}

// TestMetricsResults: commit-status results are the CommitStatusFailed
// reasons; webhook results name the receiver's answers.
func TestMetricsResults(t *testing.T) {
	assert.Equal(t, "Unauthorized", forgeReason(errors.Join(errors.New("post"), status.ErrUnauthorized)))
	for code, want := range map[int]string{200: "Requested", 202: "Ignored", 400: "Rejected", 401: "Unauthorized",
		404: "NotFound", 405: "Rejected", 413: "Rejected", 429: "Throttled", 503: "Throttled", 500: "Error"} {
		before := testutil.ToFloat64(webhookTotal.WithLabelValues(want))
		h := countWebhooks(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "x", code) }))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/hook/x", nil))
		assert.Equal(t, before+1, testutil.ToFloat64(webhookTotal.WithLabelValues(want)), "%d", code)
	}
}

// seriesOf counts the series of the registry naming the object id.
func seriesOf(t *testing.T, id types.NamespacedName) int {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	n := 0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == id.Namespace && labels["name"] == id.Name {
				n++
			}
		}
	}
	return n
}

func histogramCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	return histogram(t, o).GetSampleCount()
}

func histogram(t *testing.T, o prometheus.Observer) *dto.Histogram {
	t.Helper()
	m := &dto.Metric{}
	require.NoError(t, o.(prometheus.Metric).Write(m))
	return m.GetHistogram()
}

// TestMetricsLastAbortFromHistory: the last abort comes from
// status.history, so a controller that starts after it still shows it.
func TestMetricsLastAbortFromHistory(t *testing.T) {
	id := uniqueName(t, v1alpha1.FlinkBlueGreenDeploymentKind)
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name}}
	observeDeployment(p, time.Second)
	assert.Zero(t, testutil.ToFloat64(lastAbort.WithLabelValues(id.Namespace, id.Name)))
	ended := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	p.Status.History = []v1alpha1.RolloutRecord{
		{Kind: v1alpha1.RolloutBlueGreen, Outcome: v1alpha1.RolloutAborted, StartedAt: metav1.NewTime(ended.Add(-time.Minute)), FinishedAt: &metav1.Time{Time: ended}},
		{Kind: v1alpha1.RolloutBlueGreen, Outcome: v1alpha1.RolloutInProgress, StartedAt: metav1.NewTime(ended.Add(time.Minute))},
	}
	observeDeployment(p, time.Second)
	assert.Equal(t, float64(ended.Unix()), testutil.ToFloat64(lastAbort.WithLabelValues(id.Namespace, id.Name)))
	forgetMetrics(v1alpha1.FlinkBlueGreenDeploymentKind, id)
}
