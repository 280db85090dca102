/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

const (
	revA = "main@sha1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	revB = "main@sha1:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	revC = "main@sha1:cccccccccccccccccccccccccccccccccccccccc"
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
		wantState State
		wantDesc  string
	}{
		{"nothing attempted", v1alpha1.GitRepositoryStatus{}, "", ""},
		{"applying", v1alpha1.GitRepositoryStatus{LastAttemptedRevision: revA,
			Conditions: []metav1.Condition{cond(v1alpha1.ReconcilingCondition, "True", "applying")}}, StatePending, "applying to the cluster"},
		{"applied", v1alpha1.GitRepositoryStatus{LastAttemptedRevision: revA, LastAppliedRevision: revA,
			Inventory: &v1alpha1.Inventory{Entries: make([]v1alpha1.ObjectRef, 3)}}, StateSuccess, "applied to the cluster (3 objects)"},
		{"build failed", v1alpha1.GitRepositoryStatus{LastAttemptedRevision: revB, LastAppliedRevision: revA,
			Conditions: []metav1.Condition{cond(v1alpha1.BuildFailedCondition, "True", "kustomize build failed: x")}}, StateFailure, "kustomize build failed: x"},
		{"apply failed", v1alpha1.GitRepositoryStatus{LastAttemptedRevision: revB,
			Conditions: []metav1.Condition{cond(v1alpha1.ApplyFailedCondition, "True", "apply failed: y")}}, StateFailure, "apply failed: y"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := SyncDesired(gr(tc.st))
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

// TestSyncDesiredVerdictOfAnEarlierPendingRevision: a revision the forge
// saw pending, whose verdict it missed before a newer revision was
// attempted, gets its verdict (make chaos, TestSupersededSyncVerdictIsPosted).
func TestSyncDesiredVerdictOfAnEarlierPendingRevision(t *testing.T) {
	ctx := "bg-gitops/sync/flink/jobs"
	pending := func(rev string) v1alpha1.CommitStatusRecord {
		return v1alpha1.CommitStatusRecord{Context: ctx, Revision: rev, State: "pending", Pending: 1}
	}
	gr := &v1alpha1.GitRepository{Status: v1alpha1.GitRepositoryStatus{
		LastAttemptedRevision: revC, LastAppliedRevision: revC, AppliedRevisions: []string{revA, revC},
		Inventory:      &v1alpha1.Inventory{Entries: make([]v1alpha1.ObjectRef, 2)},
		CommitStatuses: []v1alpha1.CommitStatusRecord{pending(revA), pending(revB), pending(revC)},
	}}
	gr.Namespace, gr.Name = "flink", "jobs"
	d := func(rev string, s State, desc string) Desired {
		return Desired{Revision: rev, Status: Entry{Context: ctx, State: s, Description: desc}}
	}
	assert.Equal(t, []Desired{
		d(revC, StateSuccess, "applied to the cluster (2 objects)"),
		d(revA, StateSuccess, "applied to the cluster; replaced since by cccccccccccc"),
		d(revB, StateFailure, "not applied: superseded by cccccccccccc"),
	}, SyncDesired(gr))

	// C failed to build: A, the revision last applied, is still applied.
	gr.Status.LastAttemptedRevision, gr.Status.LastAppliedRevision, gr.Status.AppliedRevisions = revC, revA, []string{revA}
	gr.Status.Conditions = []metav1.Condition{cond(v1alpha1.BuildFailedCondition, "True", "kustomize build failed: x")}
	assert.Equal(t, []Desired{
		d(revC, StateFailure, "kustomize build failed: x"),
		d(revA, StateSuccess, "applied to the cluster (2 objects)"),
		d(revB, StateFailure, "not applied: superseded by cccccccccccc"),
	}, SyncDesired(gr))
}

func TestAppendRevisionKeepsTheNewestEight(t *testing.T) {
	var revs []string
	nothing := func(string) bool { return false }
	for _, c := range "abcdefghij" {
		revs = AppendRevision(revs, string(c), nothing)
		revs = AppendRevision(revs, string(c), nothing)
	}
	assert.Equal(t, []string{"c", "d", "e", "f", "g", "h", "i", "j"}, revs)

	// One the forge still owes a sync verdict stays beyond the eight.
	owed := func(r string) bool { return r == "c" }
	for _, c := range "klm" {
		revs = AppendRevision(revs, string(c), owed)
	}
	assert.Equal(t, []string{"c", "f", "g", "h", "i", "j", "k", "l", "m"}, revs)
}

func TestRolloutDesired(t *testing.T) {
	fbgd := func(st v1alpha1.FlinkBlueGreenDeploymentStatus) *v1alpha1.FlinkBlueGreenDeployment {
		p := &v1alpha1.FlinkBlueGreenDeployment{Status: st}
		p.Namespace, p.Name = "flink", "orders"
		p.Annotations = map[string]string{v1alpha1.RevisionAnnotation: revB}
		return p
	}
	ctx := "bg-gitops/rollout/flink/orders"
	d := func(rev string, s State, desc string) Desired {
		return Desired{Revision: rev, Status: Entry{Context: ctx, State: s, Description: desc}}
	}
	rec := func(rev, state string, pending int32) v1alpha1.CommitStatusRecord {
		return v1alpha1.CommitStatusRecord{Context: ctx, Revision: rev, State: state, Description: "x", Pending: pending}
	}
	running := v1alpha1.JobStatus{State: v1alpha1.JobRunning}
	reconciling := v1alpha1.JobStatus{State: v1alpha1.JobReconciling}
	blueLive := []v1alpha1.CommitStatusRecord{rec(revA, "success", 2)}
	sp := &v1alpha1.SavepointStatus{Name: "sp", Path: "/sp/savepoint-1"}
	cases := []struct {
		name string
		st   v1alpha1.FlinkBlueGreenDeploymentStatus
		want []Desired
	}{
		{"first deployment", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToBlue, TargetRevision: revB,
			JobStatus: reconciling, Conditions: []metav1.Condition{cond(v1alpha1.ReconcilingCondition, "True", "deploying orders-blue (x)")}},
			[]Desired{d(revB, StatePending, "deploying orders-blue")}},
		{"savepointing", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.SavepointingBlue, TargetRevision: revB,
			ActiveDeployment: "orders-blue", ActiveRevision: revA, JobStatus: reconciling, CommitStatuses: blueLive,
			Conditions: []metav1.Condition{cond(v1alpha1.ReconcilingCondition, "True", "taking savepoint orders-sp-1 of orders-blue")}},
			[]Desired{d(revB, StatePending, "taking a savepoint of orders-blue")}},
		{"new colour starting, whatever the deadline says", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToGreen,
			TargetRevision: revB, ActiveDeployment: "orders-blue", ActiveRevision: revA, JobStatus: reconciling, Savepoint: sp, CommitStatuses: blueLive,
			Conditions: []metav1.Condition{cond(v1alpha1.ReconcilingCondition, "True", "waiting for orders-green to become ready (abort at 12:00:03)")}},
			[]Desired{d(revB, StatePending, "starting orders-green from savepoint /sp/savepoint-1; orders-blue keeps running")}},
		{"changed in place", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToBlue,
			TargetRevision: revB, ActiveDeployment: "orders-blue", ActiveRevision: revA, JobStatus: reconciling, CommitStatuses: blueLive},
			[]Desired{d(revB, StatePending, "changing orders-blue in place")}},
		{"green active", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveGreen, ActiveRevision: revB, TargetRevision: revB,
			ActiveDeployment: "orders-green", JobStatus: running, Savepoint: sp, LiveRevisions: []string{revA, revB}, CommitStatuses: blueLive},
			[]Desired{d(revB, StateSuccess, "orders-green active, restored from savepoint /sp/savepoint-1")}},
		{"aborted", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, ActiveDeployment: "orders-blue",
			ActiveRevision: revA, TargetRevision: revB, CommitStatuses: blueLive,
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, Error: "aborted: orders-green not ready within 10m; orders-blue keeps running"},
			[]Desired{d(revB, StateFailure, "aborted: orders-green not ready within 10m; orders-blue keeps running")}},
		{"revert of an aborted change", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, ActiveDeployment: "orders-blue",
			ActiveRevision: revA, TargetRevision: revB, JobStatus: running, CommitStatuses: blueLive},
			[]Desired{d(revB, StateSuccess, "no change: orders-blue already runs this spec")}},
		{"a commit after an abort that keeps the aborted spec", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			ActiveDeployment: "orders-blue", ActiveRevision: revA, TargetRevision: revC, CommitStatuses: append(blueLive, rec(revC, "failure", 3)),
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, Error: "aborted"},
			[]Desired{d(revC, StateFailure, "aborted"),
				d(revB, StateFailure, "not rolled out: the rollout of its spec failed at cccccccccccc")}},
		{"pending commit superseded before it went live", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToGreen,
			TargetRevision: revB, JobStatus: reconciling, CommitStatuses: []v1alpha1.CommitStatusRecord{rec(revC, "pending", 1)}},
			[]Desired{d(revB, StatePending, "deploying orders-green"),
				d(revC, StateFailure, "superseded by bbbbbbbbbbbb before it went live")}},
		{"a revision that went live is not superseded", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToGreen,
			ActiveDeployment: "orders-green", ActiveRevision: revC, TargetRevision: revB, JobStatus: reconciling, Savepoint: sp,
			LiveRevisions: []string{revC}, CommitStatuses: []v1alpha1.CommitStatusRecord{rec(revC, "pending", 3)}},
			[]Desired{d(revB, StatePending, "changing orders-green in place"),
				d(revC, StateSuccess, "orders-green active, restored from savepoint /sp/savepoint-1")}},
		{"a revision that went live while the forge was down, replaced since", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			ActiveDeployment: "orders-blue", ActiveRevision: revB, TargetRevision: revB, JobStatus: running,
			LiveRevisions: []string{revA, revC, revB}, CommitStatuses: []v1alpha1.CommitStatusRecord{rec(revA, "success", 1), rec(revC, "pending", 2)}},
			[]Desired{d(revB, StateSuccess, "orders-blue active"),
				d(revC, StateSuccess, "went live; replaced since by bbbbbbbbbbbb")}},
		{"a failed in-place change never becomes a success", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			ActiveDeployment: "orders-blue", ActiveRevision: revC, TargetRevision: revB, JobStatus: running,
			LiveRevisions: []string{revA}, CommitStatuses: append(blueLive, rec(revC, "failure", 1))},
			[]Desired{d(revB, StateSuccess, "no change: orders-blue already runs this spec")}},
		{"a suspended first commit", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.InitializingBlue,
			TargetRevision: revB, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobSuspended}},
			[]Desired{d(revB, StateSuccess, "suspended as requested: no FlinkDeployment is started")}},
		{"a commit that arrives during a rollout waits for it", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.SavepointingBlue,
			TargetRevision: revC, ActiveDeployment: "orders-blue", ActiveRevision: revA, JobStatus: reconciling, CommitStatuses: blueLive},
			[]Desired{d(revC, StatePending, "taking a savepoint of orders-blue"),
				d(revB, StatePending, "waiting for the rollout of cccccccccccc to finish")}},
		{"a refused spec fails its commit", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			ActiveDeployment: "orders-blue", ActiveRevision: revA, TargetRevision: revA, JobStatus: running, LiveRevisions: []string{revA}, CommitStatuses: blueLive,
			Conditions: []metav1.Condition{{Type: v1alpha1.StalledCondition, Status: "True", Reason: "InvalidSpec", Message: "invalid duration"}}},
			[]Desired{d(revB, StateFailure, "invalid duration")}},
		{"a crash-looping active job: one failure text", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			ActiveDeployment: "orders-blue", ActiveRevision: revA, TargetRevision: revB, LiveRevisions: []string{revA}, CommitStatuses: blueLive,
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, Error: "transition to orders-green not possible: lifecycle DEPLOYED, job RESTARTING",
			Conditions: []metav1.Condition{{Type: v1alpha1.ReconcilingCondition, Status: "True", Reason: "WaitingForActiveJob", Message: "x"}}},
			[]Desired{d(revB, StateFailure, "transition not started: orders-blue is not ready; it starts when it is")}},
		{"a commit after the live job failed: the error, not blame", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue,
			ActiveDeployment: "orders-blue", ActiveRevision: revA, TargetRevision: revA, LiveRevisions: []string{revA}, CommitStatuses: blueLive,
			JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, Error: "active FlinkDeployment orders-blue is missing"},
			[]Desired{d(revB, StateFailure, "active FlinkDeployment orders-blue is missing")}},
		{"a success is final", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, ActiveDeployment: "orders-blue",
			ActiveRevision: revB, TargetRevision: revB, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, Error: "active FlinkDeployment orders-blue is missing",
			CommitStatuses: []v1alpha1.CommitStatusRecord{rec(revB, "success", 4)}}, nil},
		{"pending stops at the bound, the verdict does not", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToGreen,
			TargetRevision: revB, ActiveDeployment: "orders-blue", ActiveRevision: revA, JobStatus: reconciling, CommitStatuses: append(blueLive, rec(revB, "pending", MaxPending))},
			nil},
		{"the verdict after the bound", v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, ActiveDeployment: "orders-blue",
			ActiveRevision: revA, TargetRevision: revB, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobFailing}, Error: "aborted",
			CommitStatuses: append(blueLive, rec(revB, "pending", MaxPending))},
			[]Desired{d(revB, StateFailure, "aborted")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RolloutDesired(fbgd(tc.st))
			if len(tc.want) == 0 {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRecordsAcknowledgeOnce(t *testing.T) {
	want := []Desired{{Revision: revA, Status: Entry{Context: "c", State: StateSuccess, Description: "ok"}}}
	assert.Len(t, Unacknowledged(want, nil, "gitea"), 1)
	records := MergeRecords(nil, []v1alpha1.CommitStatusRecord{{Context: "c", Revision: revA, State: "pending", Description: "p"}})
	assert.Len(t, Unacknowledged(want, records, "gitea"), 1, "a pending record does not acknowledge success")
	records = MergeRecords(records, []v1alpha1.CommitStatusRecord{{Context: "c", Revision: revA, State: "success", Description: "ok"}})
	assert.Len(t, records, 1, "the newer state replaces the record of the same context and revision")
	assert.EqualValues(t, 1, records[0].Pending, "and counts the pending statuses acknowledged for it")
	assert.Empty(t, Unacknowledged(want, records, "gitea"))
	for i := 0; i < 20; i++ {
		records = MergeRecords(records, []v1alpha1.CommitStatusRecord{{Context: "c", Revision: string(rune('a' + i)), State: "success"}})
	}
	assert.Len(t, records, MaxRecords)
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
	p.Status.CommitStatuses = []v1alpha1.CommitStatusRecord{{Context: RolloutContext("flink", "job"), Revision: revA, State: "success"}}
	got := RolloutDesired(p)
	require.Len(t, got, 1, "%+v", got)
	assert.Equal(t, revB, got[0].Revision)
	assert.Equal(t, StateFailure, got[0].Status.State)
	assert.Contains(t, got[0].Status.Description, "spec.image: Invalid value")
}

// TestUnconfirmedRecords: a status whose post got no answer is recorded
// unconfirmed: it counts as neither acknowledged nor final, a verdict the
// object no longer wants is posted again as it was, and a pending one
// still gets its verdict (superseded) without counting towards the bound.
func TestUnconfirmedRecords(t *testing.T) {
	ctx := "bg-gitops/rollout/flink/orders"
	unconfirmed := func(rev, state, desc string) v1alpha1.CommitStatusRecord {
		return v1alpha1.CommitStatusRecord{Context: ctx, Revision: rev, State: state, Description: desc, Unconfirmed: true}
	}
	d := func(rev string, s State, desc string) Desired {
		return Desired{Revision: rev, Status: Entry{Context: ctx, State: s, Description: desc}}
	}
	records := []v1alpha1.CommitStatusRecord{
		unconfirmed(revA, "failure", "aborted"),
		unconfirmed(revB, "pending", "taking a savepoint of orders-blue"),
		unconfirmed(revC, "success", "orders-green active"),
	}
	assert.Equal(t, []Desired{d(revA, StateFailure, "aborted")},
		UnconfirmedVerdicts(records, []Desired{d(revC, StateSuccess, "orders-green active")}))
	assert.False(t, hasRecord(records, d(revC, StateSuccess, "orders-green active")), "posted again until confirmed")
	assert.True(t, final(records, ctx, revC), "an unconfirmed success is final all the same")

	merged := MergeRecords(nil, records[1:2])
	assert.Equal(t, int32(1), merged[0].Pending, "an unconfirmed pending counts towards the bound")
	merged = MergeRecords(merged, []v1alpha1.CommitStatusRecord{{Context: ctx, Revision: revB, State: "pending", Description: "taking a savepoint of orders-blue"}})
	assert.Equal(t, []v1alpha1.CommitStatusRecord{{Context: ctx, Revision: revB, State: "pending", Description: "taking a savepoint of orders-blue", Pending: 1}}, merged,
		"confirmed by the next round, and not counted again")

	// A post that fails again leaves its record where it was, to age out.
	aged := MergeRecords(records, records[:1])
	assert.Equal(t, records, aged)

	p := &v1alpha1.FlinkBlueGreenDeployment{}
	p.Namespace, p.Name = "flink", "orders"
	p.Annotations = map[string]string{v1alpha1.RevisionAnnotation: revC}
	p.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{ActiveDeployment: "orders-green", ActiveRevision: revC, TargetRevision: revC,
		BlueGreenState: v1alpha1.ActiveGreen, JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}, LiveRevisions: []string{revC},
		CommitStatuses: records[1:]}
	assert.Contains(t, RolloutDesired(p), d(revB, StateFailure, "superseded by cccccccccccc before it went live"))
}
