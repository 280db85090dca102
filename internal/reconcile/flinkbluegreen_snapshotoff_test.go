/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// With the Flink operator's snapshot controller off, the FlinkStateSnapshot
// of a stateful rollout never gets a status. The rollout fails once the
// snapshot pickup timeout (2s here) has passed, not the savepoint timeout
// (10 min), with a reason naming the operator's setting; blue is the same
// job, running, untouched, and no green was started. (Failed on the code as
// it was: the rollout stayed in SAVEPOINTING_BLUE until the savepoint
// timeout.)
func TestASnapshotTheOperatorNeverPicksUpFailsTheRolloutAtOnce(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	const off = `, "` + flinksim.FaultSnapshotControllerOff + `": "true"`
	pickup := func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.SnapshotPickupTimeoutKey] = "2s"
	}
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", off)
	pickup(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ := child(ns, "job-blue")
	jobID := nested(blue, "status", "jobStatus", "jobId")

	update(t, ns, "job", 2, "flink:1.20.1", off, pickup)
	eventually(t, ns, "the rollout failed", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	st := getFBGD(t, ns, "job").Status
	assert.Contains(t, st.Error, bluegreen.SnapshotResourceEnabledKey+": false in the operator's configuration")
	assert.Contains(t, st.Error, "job-blue keeps running")
	assert.Equal(t, v1alpha1.RolloutFailed, st.History[len(st.History)-1].Outcome)

	now, ok := child(ns, "job-blue")
	require.True(t, ok, "blue is gone")
	assert.Equal(t, blue.GetUID(), now.GetUID(), "blue was replaced")
	assert.Nil(t, now.GetDeletionTimestamp(), "blue is being deleted")
	assert.Equal(t, jobID, nested(now, "status", "jobStatus", "jobId"), "blue's job was restarted")
	assert.Equal(t, "RUNNING", nested(now, "status", "jobStatus", "state"))
	assert.Equal(t, "flink:1.20.0", nested(now, "spec", "image"))
	_, green := child(ns, "job-green")
	assert.False(t, green, "green was started")

	snap := &unstructured.Unstructured{}
	snap.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: st.History[len(st.History)-1].SavepointName}, snap))
	_, hasStatus := snap.Object["status"]
	assert.False(t, hasStatus, "the simulated operator reconciled the snapshot")
}
