/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Upgrade modes through a blue/green transition (reference §1.6: the
// blue/green controller savepoints in every upgradeMode except stateless;
// last-state savepoints too, checkpoint reuse being disabled upstream;
// §1.5: the new child's initialSavepointPath is the savepoint's location,
// else the template's). docs/design.md: "Stateless upgrade mode needs no
// savepoint".

func withUpgradeMode(mode string) func(*v1alpha1.FlinkBlueGreenDeployment) {
	return func(p *v1alpha1.FlinkBlueGreenDeployment) { p.Spec.Template.Spec.Job.UpgradeMode = mode }
}

func snapshots(t *testing.T, ns string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
	return list.Items
}

// deployInMode creates the FlinkBlueGreenDeployment in an upgrade mode,
// waits for ACTIVE_BLUE and rolls out a new image; it returns blue's job
// and green once the transition is complete.
func deployInMode(t *testing.T, ns, mode string) (blueJob string, green *unstructured.Unstructured) {
	t.Helper()
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	withUpgradeMode(mode)(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blueJob = jobIDOf(ns, "job-blue")
	assert.Empty(t, snapshots(t, ns), "a first deployment takes no savepoint")

	update(t, ns, "job", 2, "flink:1.20.1", "", withUpgradeMode(mode))
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	eventually(t, ns, "blue deleted", func() bool { _, ok := child(ns, "job-blue"); return !ok })
	green, ok := child(ns, "job-green")
	require.True(t, ok)
	assert.Equal(t, "flink:1.20.1", nested(green, "spec", "image"))
	assert.Equal(t, mode, nested(green, "spec", "job", "upgradeMode"))
	assert.Equal(t, revision(2), getFBGD(t, ns, "job").Status.ActiveRevision)
	return blueJob, green
}

// TestStatelessTransitionTakesNoSavepoint: upgradeMode stateless goes
// blue/green without a savepoint: no FlinkStateSnapshot, no
// status.savepoint, green's initialSavepointPath is the template's (empty)
// and its job starts empty although blue's had made progress.
func TestStatelessTransitionTakesNoSavepoint(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob, green := deployInMode(t, ns, v1alpha1.UpgradeModeStateless)

	assert.Empty(t, snapshots(t, ns), "no savepoint was requested")
	assert.Nil(t, getFBGD(t, ns, "job").Status.Savepoint)
	assert.Empty(t, nested(green, "spec", "job", "initialSavepointPath"))
	job, ok := sim.Lineage().Job(nested(green, "status", "jobStatus", "jobId"))
	require.True(t, ok)
	assert.Empty(t, job.RestoredFrom, "the new colour starts empty")
	assert.Zero(t, job.StartOffset)
	blue, ok := sim.Lineage().Job(blueJob)
	require.True(t, ok)
	assert.True(t, blue.Stopped, "blue's job was stopped at the cut-over")
	assert.NotEqual(t, blue.ID, job.ID)
}

// TestLastStateTransitionRestoresFromASavepoint: upgradeMode last-state
// goes blue/green like savepoint mode: one FlinkStateSnapshot of blue's
// job, completed, whose path is status.savepoint.path and green's
// initialSavepointPath, and green's job carries blue's offset.
func TestLastStateTransitionRestoresFromASavepoint(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob, green := deployInMode(t, ns, v1alpha1.UpgradeModeLastState)

	sp := getFBGD(t, ns, "job").Status.Savepoint
	require.NotNil(t, sp, "a savepoint was taken")
	snaps := snapshots(t, ns)
	require.Len(t, snaps, 1)
	snap := snaps[0]
	assert.Equal(t, sp.Name, snap.GetName())
	assert.Equal(t, "FlinkDeployment", nested(&snap, "spec", "jobReference", "kind"))
	assert.Equal(t, "job-blue", nested(&snap, "spec", "jobReference", "name"))
	assert.Equal(t, "COMPLETED", nested(&snap, "status", "state"))
	assert.NotEmpty(t, sp.Path)
	// The location Flink reports, "file:" stripped (reference §1.5).
	assert.Equal(t, sp.Path, strings.TrimPrefix(nested(&snap, "status", "path"), "file:"))
	assert.Equal(t, sp.Path, nested(green, "spec", "job", "initialSavepointPath"))
	assertRestoredFrom(t, green, blueJob)
}
