/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// With --keep-snapshots 1, the FlinkStateSnapshots bg-gitops took for
// rollouts do not pile up: after four rollouts (the last one's savepoint
// failed), what is left is the newest finished one (the failed), the one
// the running job restored from, and a snapshot of the job that bg-gitops
// did not create; the two older savepoints are deleted. (Without pruning,
// all four stay.)
func TestOnlyTheSnapshotsStillUsefulAreKept(t *testing.T) {
	ns := newNamespace(t)
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: ns,
		Controllers: &reconcile.Options{CacheDir: t.TempDir(), Concurrent: 2, KeepSnapshots: 1}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)

	require.NoError(t, env.Client.Create(context.Background(), fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	foreign := snapshotOf(ns, "by-hand", "job-blue")
	foreign.SetLabels(map[string]string{v1alpha1.FlinkBlueGreenDeploymentLabel: "job"})
	require.NoError(t, env.Client.Create(context.Background(), foreign))

	var taken []string
	roll := func(rev int, image, conf string, bg v1alpha1.BlueGreenState, job v1alpha1.JobState) {
		t.Helper()
		update(t, ns, "job", rev, image, conf)
		eventually(t, ns, image+" rolled out", func() bool {
			p := getFBGD(t, ns, "job")
			h := p.Status.History
			return p.Status.BlueGreenState == bg && p.Status.JobStatus.State == job && len(h) > 0 &&
				h[len(h)-1].Revision == revision(rev) && h[len(h)-1].Outcome != v1alpha1.RolloutInProgress
		})
		h := getFBGD(t, ns, "job").Status.History
		taken = append(taken, h[len(h)-1].SavepointName)
	}
	roll(2, "flink:1.20.1", "", v1alpha1.ActiveGreen, v1alpha1.JobRunning)
	roll(3, "flink:1.20.2", "", v1alpha1.ActiveBlue, v1alpha1.JobRunning)
	failing := `, "` + flinksim.FaultSavepoint + `": "fail"`
	roll(4, "flink:1.20.3", failing, v1alpha1.ActiveGreen, v1alpha1.JobRunning)
	roll(5, "flink:1.20.4", failing, v1alpha1.ActiveGreen, v1alpha1.JobFailing)

	want := []string{"by-hand", taken[2], taken[3]}
	slices.Sort(want)
	eventually(t, ns, "the older snapshots deleted", func() bool { return slices.Equal(snapshotNames(t, ns), want) })
	green, _ := child(ns, "job-green")
	restored := &unstructured.Unstructured{}
	restored.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: taken[2]}, restored))
	assert.Equal(t, strings.TrimPrefix(nested(restored, "status", "path"), "file:"), nested(green, "spec", "job", "initialSavepointPath"),
		"the running job restored from the snapshot kept beyond --keep-snapshots")
}

// snapshotOf is a FlinkStateSnapshot of job, as a person writes one.
func snapshotOf(ns, name, job string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"jobReference": map[string]any{"kind": "FlinkDeployment", "name": job},
		"savepoint": map[string]any{"disposeOnDelete": false}}
	return u
}

func snapshotNames(t testing.TB, ns string) []string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK.GroupVersion().WithKind("FlinkStateSnapshotList"))
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
	var names []string
	for _, u := range list.Items {
		names = append(names, u.GetName())
	}
	slices.Sort(names)
	return names
}
