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

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/reconcile"
)

// TestOnlySnapshotsBgGitopsCreatedForTheDeploymentAreItsOwn: the snapshot
// the controller creates for a deployment is its own; one of the same
// name that someone created first (not owned by it, or of another job) is
// foreign, and a state record, which outlives its deployment, is its own.
func TestOnlySnapshotsBgGitopsCreatedForTheDeploymentAreItsOwn(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := fbgdObject(t, ns, "orders", 1, "flink:1.20.0", "")
	require.NoError(t, env.Client.Create(ctx, p))
	observe := func(spec *bluegreen.SnapshotSpec, mutate func(*v1alpha1.FlinkBlueGreenDeployment)) string {
		t.Helper()
		owner := p.DeepCopy()
		if mutate != nil {
			mutate(owner)
		}
		require.NoError(t, env.Client.Create(ctx, reconcile.SnapshotObject(owner, spec)))
		p.Status.Savepoint = &v1alpha1.SavepointStatus{Name: spec.Name}
		snap, err := reconcile.ObserveSnapshot(ctx, env.Client, p)
		require.NoError(t, err)
		require.NotNil(t, snap)
		return snap.Foreign
	}
	assert.Empty(t, observe(&bluegreen.SnapshotSpec{Name: "orders-sp-ours", JobName: "orders-blue"}, nil))
	// Owned by another deployment that exists (the garbage collector
	// deletes a snapshot whose owner does not).
	other := fbgdObject(t, ns, "other", 1, "flink:1.20.0", "")
	require.NoError(t, env.Client.Create(ctx, other))
	assert.Equal(t, "it is not owned by orders", observe(&bluegreen.SnapshotSpec{Name: "orders-sp-planted", JobName: "orders-blue"},
		func(o *v1alpha1.FlinkBlueGreenDeployment) { o.Name, o.UID = other.Name, other.UID }))
	assert.Equal(t, `its job is "payments-blue", not a job of orders`,
		observe(&bluegreen.SnapshotSpec{Name: "orders-sp-other-job", JobName: "payments-blue"}, nil))
	assert.Empty(t, observe(&bluegreen.SnapshotSpec{Name: bluegreen.FinalSnapshotName(p), JobName: "orders-green", Record: &bluegreen.RecordSpec{}}, nil))
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
	assert.Equal(t, "it is not owned by orders", snap.Foreign)
}

// TestAnOwnedSnapshotOfAChosenPathIsNotOurs: an owner reference to the
// deployment's uid (readable, so writable by anyone who may create a
// snapshot beside it) does not make a snapshot that names an existing
// savepoint path ours: a transition never starts from a path its
// snapshot's creator chose.
func TestAnOwnedSnapshotOfAChosenPathIsNotOurs(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := fbgdObject(t, ns, "orders", 1, "flink:1.20.0", "")
	require.NoError(t, env.Client.Create(ctx, p))
	u := reconcile.SnapshotObject(p, &bluegreen.SnapshotSpec{Name: "orders-sp-chosen", JobName: "orders-blue"})
	require.NoError(t, unstructured.SetNestedField(u.Object, true, "spec", "savepoint", "alreadyExists"))
	require.NoError(t, unstructured.SetNestedField(u.Object, "s3://elsewhere/savepoint-1", "spec", "savepoint", "path"))
	require.NoError(t, env.Client.Create(ctx, u))
	p.Status.Savepoint = &v1alpha1.SavepointStatus{Name: "orders-sp-chosen"}
	snap, err := reconcile.ObserveSnapshot(ctx, env.Client, p)
	require.NoError(t, err)
	require.NotNil(t, snap)
	assert.Contains(t, snap.Foreign, "alreadyExists")
}
