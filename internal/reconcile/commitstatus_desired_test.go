/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/status"
)

const (
	revA = "main@sha1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	revB = "main@sha1:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func cond(typ string, s metav1.ConditionStatus, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: "R", Message: msg}
}

func TestSyncDesired(t *testing.T) {
	gr := func(st v1alpha1.GitRepositoryStatus) *v1alpha1.GitRepository {
		g := &v1alpha1.GitRepository{Status: st}
		g.Namespace, g.Name = "flink", "jobs"
		return g
	}
	cases := []struct {
		name      string
		st        v1alpha1.GitRepositoryStatus
		wantState status.State
		wantDesc  string
	}{
		{"nothing attempted", v1alpha1.GitRepositoryStatus{}, "", ""},
		{"applying", v1alpha1.GitRepositoryStatus{LastAttemptedRevision: revA,
			Conditions: []metav1.Condition{cond(v1alpha1.ReconcilingCondition, "True", "applying")}}, status.StatePending, "applying to the cluster"},
		{"applied", v1alpha1.GitRepositoryStatus{LastAttemptedRevision: revA, LastAppliedRevision: revA,
			Inventory: &v1alpha1.Inventory{Entries: make([]v1alpha1.ObjectRef, 3)}}, status.StateSuccess, "applied to the cluster (3 objects)"},
		{"build failed", v1alpha1.GitRepositoryStatus{LastAttemptedRevision: revB, LastAppliedRevision: revA,
			Conditions: []metav1.Condition{cond(v1alpha1.BuildFailedCondition, "True", "kustomize build failed: x")}}, status.StateFailure, "kustomize build failed: x"},
		{"apply failed", v1alpha1.GitRepositoryStatus{LastAttemptedRevision: revB,
			Conditions: []metav1.Condition{cond(v1alpha1.ApplyFailedCondition, "True", "apply failed: y")}}, status.StateFailure, "apply failed: y"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := syncDesired(gr(tc.st))
			if tc.wantState == "" {
				assert.Empty(t, got)
				return
			}
			assert.Len(t, got, 1)
			assert.Equal(t, "bg-gitops/sync/flink/jobs", got[0].Status.Context)
			assert.Equal(t, tc.wantState, got[0].Status.State)
			assert.Equal(t, tc.wantDesc, got[0].Status.Description)
		})
	}
}

func TestRolloutDesired(t *testing.T) {
	fbgd := func(st v1alpha1.FlinkBlueGreenDeploymentStatus) *v1alpha1.FlinkBlueGreenDeployment {
		p := &v1alpha1.FlinkBlueGreenDeployment{Status: st}
		p.Namespace, p.Name = "flink", "orders"
		p.Annotations = map[string]string{v1alpha1.RevisionAnnotation: revB}
		return p
	}
	ctx := "bg-gitops/rollout/flink/orders"
	cases := []struct {
		name string
		st   v1alpha1.FlinkBlueGreenDeploymentStatus
		want []status.Desired
	}{
		{"savepointing", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.SavepointingBlue, TargetRevision: revB,
			JobStatus:  v1alpha1.JobStatus{State: v1alpha1.JobReconciling},
			Conditions: []metav1.Condition{cond(v1alpha1.ReconcilingCondition, "True", "taking savepoint of orders-blue")}},
			[]status.Desired{{Revision: revB, Status: status.Entry{Context: ctx, State: status.StatePending, Description: "taking savepoint of orders-blue"}}}},
		{"green active", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveGreen, ActiveRevision: revB, TargetRevision: revB,
			ActiveDeployment: "orders-green", JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning},
			Savepoint: &v1alpha1.SavepointStatus{Name: "sp", Path: "/sp/savepoint-1"}},
			[]status.Desired{{Revision: revB, Status: status.Entry{Context: ctx, State: status.StateSuccess, Description: "orders-green active, restored from savepoint /sp/savepoint-1"}}}},
		{"aborted", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, ActiveRevision: revA, TargetRevision: revB,
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, Error: "aborted: orders-green not ready within 10m; orders-blue keeps running"},
			[]status.Desired{{Revision: revB, Status: status.Entry{Context: ctx, State: status.StateFailure, Description: "aborted: orders-green not ready within 10m; orders-blue keeps running"}}}},
		{"superseded pending commit", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToGreen, TargetRevision: revB,
			CommitStatuses: []v1alpha1.CommitStatusRecord{{Context: ctx, Revision: revA, State: "pending", Description: "x"}}},
			[]status.Desired{
				{Revision: revB, Status: status.Entry{Context: ctx, State: status.StatePending, Description: "rollout in progress"}},
				{Revision: revA, Status: status.Entry{Context: ctx, State: status.StateFailure, Description: "superseded by bbbbbbbbbbbb before its rollout finished"}},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, rolloutDesired(fbgd(tc.st)))
		})
	}
}

func TestRecordsAcknowledgeOnce(t *testing.T) {
	want := []status.Desired{{Revision: revA, Status: status.Entry{Context: "c", State: status.StateSuccess, Description: "ok"}}}
	assert.Len(t, unacknowledged(want, nil, "gitea"), 1)
	records := mergeRecords(nil, []v1alpha1.CommitStatusRecord{{Context: "c", Revision: revA, State: "pending", Description: "p"}})
	assert.Len(t, unacknowledged(want, records, "gitea"), 1, "a pending record does not acknowledge success")
	records = mergeRecords(records, []v1alpha1.CommitStatusRecord{{Context: "c", Revision: revA, State: "success", Description: "ok"}})
	assert.Len(t, records, 1, "the newer state replaces the record of the same context and revision")
	assert.Empty(t, unacknowledged(want, records, "gitea"))
	for i := 0; i < 20; i++ {
		records = mergeRecords(records, []v1alpha1.CommitStatusRecord{{Context: "c", Revision: string(rune('a' + i)), State: "success"}})
	}
	assert.Len(t, records, maxRecords)
}

// A rejected new colour is a failure of the rejected revision, with the
// API server's message, through the same decision the controller makes.
func TestRejectionIsARolloutFailureOfItsRevision(t *testing.T) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	p.Namespace, p.Name, p.Generation = "flink", "job", 2
	p.Annotations = map[string]string{v1alpha1.RevisionAnnotation: revB}
	p.Spec.Template.Spec.Job = &v1alpha1.JobSpec{JarURI: "local:///job.jar", UpgradeMode: v1alpha1.UpgradeModeStateless}
	p.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, ActiveDeployment: "job-blue",
		ActiveRevision: revA, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}}
	blue := &bluegreen.Child{Name: "job-blue", Color: bluegreen.Blue, Revision: revA, Generation: 1, ObservedGeneration: 1,
		LifecycleState: bluegreen.LifecycleStable, JobState: bluegreen.JobRunning, Spec: v1alpha1.FlinkDeploymentSpec{Image: "old",
			Job: &v1alpha1.JobSpec{JarURI: "local:///job.jar", UpgradeMode: v1alpha1.UpgradeModeStateless}}}
	in := bluegreen.Input{Parent: p, Blue: blue, Window: bluegreen.Window{Open: true}, Now: time.Now()}
	dec, err := bluegreen.Decide(in)
	require.NoError(t, err)
	require.Len(t, dec.Actions, 1, "the stateless change starts green")
	in.Rejection = &bluegreen.Rejection{Action: dec.Actions[0], Message: "spec.image: Invalid value"}
	dec, err = bluegreen.Decide(in)
	require.NoError(t, err)
	p.Status = dec.Status
	got := rolloutDesired(p)
	require.Len(t, got, 1)
	assert.Equal(t, revB, got[0].Revision)
	assert.Equal(t, status.StateFailure, got[0].Status.State)
	assert.Contains(t, got[0].Status.Description, "spec.image: Invalid value")
}
