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
	"bggitops.dev/bg-gitops/internal/reconcile"
)

// TestASnapshotIsOursOnlyByTheUIDItsCreateWasGiven: the snapshot whose
// uid the controller's create recorded in status.savepoint.uid is the
// deployment's own; one of the same name planted by someone else is
// foreign, though it carries the deployment's uid in its owner
// references and names its job (what the controller itself creates), as
// is one with no uid recorded (a status written by an earlier version, or
// whose write was lost); one of another job is foreign whatever uid is
// recorded, and the deletion's state record, which outlives its
// deployment, is its own by name and label.
func TestASnapshotIsOursOnlyByTheUIDItsCreateWasGiven(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := fbgdObject(t, ns, "orders", 1, "flink:1.20.0", "")
	require.NoError(t, env.Client.Create(ctx, p))
	observe := func(spec *bluegreen.SnapshotSpec, recorded func(created types.UID) types.UID) string {
		t.Helper()
		u := reconcile.SnapshotObject(p, spec)
		require.NoError(t, env.Client.Create(ctx, u))
		p.Status.Savepoint = &v1alpha1.SavepointStatus{Name: spec.Name, UID: recorded(u.GetUID())}
		snap, err := reconcile.ObserveSnapshot(ctx, env.Client, p)
		require.NoError(t, err)
		require.NotNil(t, snap)
		return snap.Foreign
	}
	created := func(uid types.UID) types.UID { return uid }
	none := func(types.UID) types.UID { return "" }
	ours := func(types.UID) types.UID { return "0b7e1f0e-0000-4000-8000-00000000000a" }
	assert.Empty(t, observe(&bluegreen.SnapshotSpec{Name: "orders-sp-ours", JobName: "orders-blue"}, created))
	assert.Contains(t, observe(&bluegreen.SnapshotSpec{Name: "orders-sp-planted", JobName: "orders-blue"}, ours),
		"not 0b7e1f0e-0000-4000-8000-00000000000a, the one bg-gitops created")
	assert.Contains(t, observe(&bluegreen.SnapshotSpec{Name: "orders-sp-unrecorded", JobName: "orders-blue"}, none),
		"status.savepoint.uid is empty")
	assert.Equal(t, `its job is "payments-blue", not a job of orders`,
		observe(&bluegreen.SnapshotSpec{Name: "orders-sp-other-job", JobName: "payments-blue"}, created))
	assert.Empty(t, observe(&bluegreen.SnapshotSpec{Name: bluegreen.FinalSnapshotName(p), JobName: "orders-green", Record: &bluegreen.RecordSpec{}}, none))
}

// TestARecordLabelDoesNotMakeATransitionSnapshotOurs: the state-record
// label, which anyone who may create a FlinkStateSnapshot can set, makes
// only the deletion's own record (its name derived from the deployment's
// uid) ours; a labelled, unowned snapshot planted under the name of a
// transition's savepoint is foreign.
func TestARecordLabelDoesNotMakeATransitionSnapshotOurs(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := fbgdObject(t, ns, "orders", 1, "flink:1.20.0", "")
	require.NoError(t, env.Client.Create(ctx, p))
	planted := &bluegreen.SnapshotSpec{Name: "orders-sp-planted", JobName: "orders-blue", Record: &bluegreen.RecordSpec{}}
	require.NoError(t, env.Client.Create(ctx, reconcile.SnapshotObject(p, planted)))
	p.Status.Savepoint = &v1alpha1.SavepointStatus{Name: planted.Name}
	snap, err := reconcile.ObserveSnapshot(ctx, env.Client, p)
	require.NoError(t, err)
	require.NotNil(t, snap)
	assert.Contains(t, snap.Foreign, "status.savepoint.uid is empty")
}

// TestASnapshotOfAChosenPathIsNotOursEvenWithTheRecordedUID: a snapshot
// whose uid the controller recorded, but whose spec now names an existing
// savepoint path (alreadyExists, written since by anyone who may update
// snapshots beside it), is not ours: a transition never starts from a
// path its snapshot's writer chose.
func TestASnapshotOfAChosenPathIsNotOursEvenWithTheRecordedUID(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := fbgdObject(t, ns, "orders", 1, "flink:1.20.0", "")
	require.NoError(t, env.Client.Create(ctx, p))
	u := reconcile.SnapshotObject(p, &bluegreen.SnapshotSpec{Name: "orders-sp-chosen", JobName: "orders-blue"})
	require.NoError(t, unstructured.SetNestedField(u.Object, true, "spec", "savepoint", "alreadyExists"))
	require.NoError(t, unstructured.SetNestedField(u.Object, "s3://elsewhere/savepoint-1", "spec", "savepoint", "path"))
	require.NoError(t, env.Client.Create(ctx, u))
	p.Status.Savepoint = &v1alpha1.SavepointStatus{Name: "orders-sp-chosen", UID: u.GetUID()}
	snap, err := reconcile.ObserveSnapshot(ctx, env.Client, p)
	require.NoError(t, err)
	require.NotNil(t, snap)
	assert.Contains(t, snap.Foreign, "alreadyExists")
}
