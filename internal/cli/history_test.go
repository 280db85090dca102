/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of the history table, and the rollout history the rollback tests share.

package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(t0.Add(d)); return &t }

// threeRollouts: a first deployment, a blue/green transition from a
// savepoint, and a transition that aborted.
func threeRollouts() []v1alpha1.RolloutRecord {
	return []v1alpha1.RolloutRecord{
		{Revision: rev(shaA), Kind: v1alpha1.RolloutFirst, To: "job-blue", StartedAt: *at(0), FinishedAt: at(40 * time.Second),
			Outcome: v1alpha1.RolloutSucceeded},
		{Revision: rev(shaB), Kind: v1alpha1.RolloutBlueGreen, From: "job-blue", To: "job-green", SavepointName: "job-blue-sp-1",
			SavepointPath: "file:///sp/savepoint-1", RestoredFrom: "file:///sp/savepoint-1", StartedAt: *at(time.Hour),
			FinishedAt: at(time.Hour + 95*time.Second), Outcome: v1alpha1.RolloutSucceeded},
		{Revision: "main@sha1:" + shaC, Kind: v1alpha1.RolloutBlueGreen, From: "job-green", To: "job-blue", SavepointName: "job-green-sp-2",
			SavepointPath: "file:///sp/savepoint-2", RestoredFrom: "file:///sp/savepoint-2", StartedAt: *at(2 * time.Hour),
			FinishedAt: at(2*time.Hour + 10*time.Minute), Outcome: v1alpha1.RolloutAborted, Reason: "job-blue was not ready within 10m"},
	}
}

const shaC = "cccccccccccccccccccccccccccccccccccccccc"

func TestHistoryTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, printHistory(&out, threeRollouts(), "", t0.Add(3*time.Hour)))
	golden(t, "testdata/history/table.golden", out.String())

	out.Reset()
	require.NoError(t, printHistory(&out, nil, "", t0))
	assert.Equal(t, "No rollouts recorded yet.\n", out.String())
	assert.Error(t, printHistory(&out, nil, "wide", t0))
}
