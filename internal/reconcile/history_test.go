/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestHistoryAfterTwoTransitionsAndAnAbort: a first deployment, a stateful
// transition, and a third commit whose new colour never becomes ready and
// is aborted leave three entries in status.history that say what ran where
// from which savepoint; kubectl's JOB column shows the job that runs
// (green, RUNNING) while jobStatus.state reports the abort (FAILING); the
// savepoints are labelled with their deployment and revision.
func TestHistoryAfterTwoTransitionsAndAnAbort(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.1", "")
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	eventually(t, ns, "blue deleted", func() bool { _, ok := child(ns, "job-blue"); return !ok })
	update(t, ns, "job", 3, "flink:broken", neverReady, withAbortGrace("2s"))
	eventually(t, ns, "abort", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobFailing))

	p := getFBGD(t, ns, "job")
	h := p.Status.History
	require.Len(t, h, 3, "%+v", h)
	first, second, third := h[0], h[1], h[2]
	assert.Equal(t, historyEntry{v1alpha1.RolloutFirst, revision(1), "", "job-blue", v1alpha1.RolloutSucceeded}, summary(first))
	assert.Equal(t, historyEntry{v1alpha1.RolloutBlueGreen, revision(2), "job-blue", "job-green", v1alpha1.RolloutSucceeded}, summary(second))
	assert.Equal(t, historyEntry{v1alpha1.RolloutBlueGreen, revision(3), "job-green", "job-blue", v1alpha1.RolloutAborted}, summary(third))
	for i, r := range h {
		require.NotNil(t, r.FinishedAt, "entry %d finished", i)
		assert.False(t, r.FinishedAt.Before(&r.StartedAt), "entry %d finished after it started", i)
	}
	assert.Empty(t, first.SavepointName, "a first deployment takes no savepoint")
	assert.Empty(t, first.Reason)
	assert.Empty(t, second.Reason)
	assert.NotEmpty(t, third.Reason)
	assert.Equal(t, p.Status.Error, third.Reason, "the abort's reason is status.error")

	green, ok := child(ns, "job-green")
	require.True(t, ok)
	assertSavepointEntry(t, ns, second, revision(2), nested(green, "spec", "job", "initialSavepointPath"))
	blue, ok := child(ns, "job-blue")
	require.True(t, ok, "the aborted colour is kept, suspended")
	assertSavepointEntry(t, ns, third, revision(3), nested(blue, "spec", "job", "initialSavepointPath"))
	assert.Len(t, labelledSnapshots(t, ns, "job"), 2, "both savepoints carry the deployment's label")

	assert.Equal(t, v1alpha1.JobFailing, p.Status.JobStatus.State, "jobStatus reports the rollout (FLIP-503)")
	assert.Equal(t, "RUNNING", p.Status.ActiveJobState, "activeJobState reports the job that runs")
	assert.Equal(t, "RUNNING", printedColumn(t, ns, "job", "Job"), "kubectl get shows the active job RUNNING")
	assert.Equal(t, "job-green", printedColumn(t, ns, "job", "Active"))
}

type historyEntry struct {
	Kind               v1alpha1.RolloutKind
	Revision, From, To string
	Outcome            v1alpha1.RolloutOutcome
}

func summary(r v1alpha1.RolloutRecord) historyEntry {
	return historyEntry{r.Kind, r.Revision, r.From, r.To, r.Outcome}
}

// assertSavepointEntry: the entry names the FlinkStateSnapshot taken for
// its rollout, records the path the snapshot completed at, and the new
// colour was applied with that path (restoredFrom); the snapshot carries
// the deployment's label and the revision rolled out.
func assertSavepointEntry(t *testing.T, ns string, r v1alpha1.RolloutRecord, rev, appliedPath string) {
	t.Helper()
	require.NotEmpty(t, r.SavepointName, "%+v", r)
	snap := &unstructured.Unstructured{}
	snap.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: r.SavepointName}, snap))
	assert.Equal(t, "COMPLETED", nested(snap, "status", "state"))
	assert.Equal(t, strings.TrimPrefix(nested(snap, "status", "path"), "file:"), r.SavepointPath)
	assert.NotEmpty(t, r.SavepointPath)
	assert.Equal(t, r.SavepointPath, r.RestoredFrom, "the new colour restored from the savepoint taken for it")
	assert.Equal(t, appliedPath, r.RestoredFrom, "restoredFrom is the new colour's initialSavepointPath")
	assert.Equal(t, "job", snap.GetLabels()[v1alpha1.FlinkBlueGreenDeploymentLabel])
	assert.Equal(t, rev, snap.GetAnnotations()[v1alpha1.RevisionAnnotation])
}

func labelledSnapshots(t *testing.T, ns, parent string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.List(context.Background(), list,
		client.InNamespace(ns), client.MatchingLabels{v1alpha1.FlinkBlueGreenDeploymentLabel: parent}))
	return list.Items
}

// printedColumn is what `kubectl get fbgd` prints in a column: the API
// server renders the CRD's printer columns as a Table.
func printedColumn(t *testing.T, ns, name, column string) string {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	url := strings.TrimSuffix(env.Config.Host, "/") + "/apis/" + v1alpha1.GroupVersion.String() + "/namespaces/" + ns +
		"/flinkbluegreendeployments/" + name
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	table := &metav1.Table{}
	require.NoError(t, json.Unmarshal(body, table))
	require.Len(t, table.Rows, 1)
	for i, c := range table.ColumnDefinitions {
		if c.Name == column {
			s, _ := table.Rows[0].Cells[i].(string)
			return s
		}
	}
	t.Fatalf("no column %q in %+v", column, table.ColumnDefinitions)
	return ""
}
