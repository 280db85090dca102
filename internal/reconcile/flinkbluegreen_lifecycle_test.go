/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// The state lifecycle against the real API server and the simulator: a
// deletion keeps the job's state in a record, and the next
// FlinkBlueGreenDeployment of the name (or of restore-from) starts from it.

// deleteAndWait deletes the FlinkBlueGreenDeployment and waits until it and
// its children are gone.
func deleteAndWait(t *testing.T, ns, name string) {
	t.Helper()
	require.NoError(t, env.Client.Delete(context.Background(), getFBGD(t, ns, name)))
	eventually(t, ns, name+" gone", func() bool {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &v1alpha1.FlinkBlueGreenDeployment{})
		return apierrors.IsNotFound(err)
	})
	eventually(t, ns, "children gone", func() bool {
		_, blue := child(ns, name+"-blue")
		_, green := child(ns, name+"-green")
		return !blue && !green
	})
}

// records are the state records of name in ns.
func records(t *testing.T, ns, name string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK.GroupVersion().WithKind("FlinkStateSnapshotList"))
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns),
		client.MatchingLabels{v1alpha1.FlinkBlueGreenDeploymentLabel: name, v1alpha1.StateRecordLabel: "true"}))
	return list.Items
}

func TestDeletedDeploymentsStateCarriesToTheNextOfItsName(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	job := deployBlue(t, ns, "orders")
	require.Contains(t, getFBGD(t, ns, "orders").Finalizers, v1alpha1.FinalSavepointFinalizer)

	deleteAndWait(t, ns, "orders")
	recs := records(t, ns, "orders")
	require.Len(t, recs, 1, "the deletion keeps one record")
	assert.Equal(t, "COMPLETED", nested(&recs[0], "status", "state"))
	assert.Empty(t, recs[0].GetOwnerReferences(), "the record outlives its FlinkBlueGreenDeployment")
	assert.Equal(t, job, recs[0].GetAnnotations()[v1alpha1.JobIDAnnotation])
	assert.Equal(t, "orders-blue", recs[0].GetAnnotations()[v1alpha1.JobAnnotation])

	require.NoError(t, env.Client.Create(context.Background(), fbgdObject(t, ns, "orders", 2, "flink:1.20.0", "")))
	eventually(t, ns, "ACTIVE_BLUE again", state(t, ns, "orders", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ := child(ns, "orders-blue")
	assert.Equal(t, nested(&recs[0], "status", "path"), nested(blue, "spec", "job", "initialSavepointPath"))
	assertRestoredFrom(t, blue, job)
	h := getFBGD(t, ns, "orders").Status.History
	require.NotEmpty(t, h)
	assert.Equal(t, recs[0].GetName(), h[len(h)-1].Record)
}

func TestRestoreFromCarriesStateAcrossARename(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	job := deployBlue(t, ns, "orders")
	deleteAndWait(t, ns, "orders")

	renamed := fbgdObject(t, ns, "orders-v2", 2, "flink:1.20.0", "")
	renamed.Annotations[v1alpha1.RestoreFromAnnotation] = "orders"
	require.NoError(t, env.Client.Create(context.Background(), renamed))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "orders-v2", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ := child(ns, "orders-v2-blue")
	assertRestoredFrom(t, blue, job)
}

func TestRestoreFromWithoutARecordFailsClearly(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "orders-v2", 1, "flink:1.20.0", "")
	p.Annotations[v1alpha1.RestoreFromAnnotation] = "orders"
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "failed first deployment", func() bool {
		st := getFBGD(t, ns, "orders-v2").Status
		return st.JobStatus.State == v1alpha1.JobFailing && strings.Contains(st.Error, v1alpha1.RestoreFromAnnotation)
	})
	_, ok := child(ns, "orders-v2-blue")
	assert.False(t, ok, "no job starts from empty state")
}

func TestInitialStateEmptyStartsEmptyDespiteARecord(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	deployBlue(t, ns, "orders")
	deleteAndWait(t, ns, "orders")

	p := fbgdObject(t, ns, "orders", 2, "flink:1.20.0", "")
	p.Annotations[v1alpha1.InitialStateAnnotation] = v1alpha1.InitialStateEmpty
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "orders", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ := child(ns, "orders-blue")
	assert.Empty(t, nested(blue, "spec", "job", "initialSavepointPath"))
	h := getFBGD(t, ns, "orders").Status.History
	assert.True(t, h[len(h)-1].StartedEmpty)
}

// A savepoint that hangs holds the deletion for the savepoint timeout, no
// longer; the record it leaves holds no savepoint (the job never had one),
// so the next object of the name does not start empty unless told.
func TestDeletionWithAHangingSavepointFinishesAndBlocksAnEmptyStart(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "orders", 1, "flink:1.20.0", `, "bggitops.dev/simulate-savepoint": "hang"`)
	p.Spec.Configuration[v1alpha1.SavepointTimeoutKey] = "3s"
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "orders", v1alpha1.ActiveBlue, v1alpha1.JobRunning))

	start := time.Now()
	deleteAndWait(t, ns, "orders")
	t.Logf("deleted in %s with a savepoint timeout of 3s", time.Since(start).Round(100*time.Millisecond))
	require.Len(t, records(t, ns, "orders"), 1)

	again := fbgdObject(t, ns, "orders", 2, "flink:1.20.0", "")
	require.NoError(t, env.Client.Create(context.Background(), again))
	eventually(t, ns, "refused empty start", func() bool {
		st := getFBGD(t, ns, "orders").Status
		return st.JobStatus.State == v1alpha1.JobFailing && strings.Contains(st.Error, v1alpha1.InitialStateAnnotation)
	})
	_, ok := child(ns, "orders-blue")
	assert.False(t, ok, "no job starts from empty state while a record exists")
}
