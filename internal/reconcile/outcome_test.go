/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/conditions"
	"bggitops.dev/bg-gitops/internal/source"
)

// statusWrites counts the status writes the funnel makes; every other
// call panics, so a test that reaches the API server otherwise fails.
type statusWrites struct {
	client.Client
	patches int
	fail    error
}

func (s *statusWrites) Status() client.SubResourceWriter { return statusWriter{s: s} }

type statusWriter struct {
	client.SubResourceWriter
	s *statusWrites
}

func (w statusWriter) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	w.s.patches++
	return w.s.fail
}

var testNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func ctrlResult(after time.Duration) ctrl.Result { return ctrl.Result{RequeueAfter: after} }

func TestOutcomeOfEachKind(t *testing.T) {
	poll := 5 * time.Minute
	boom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		err      error
		kind     kind
		requeue  time.Duration
		terminal bool
		returned bool
	}{
		{"success requeues at the poll", nil, kindDone, poll, false, false},
		{"waiting requeues at the poll, no error", waitingFailure("BuildFailed", "BuildFailed", boom), kindWaiting, poll, false, false},
		{"waiting with its own delay", &failure{kind: kindWaiting, reason: "R", err: boom, after: time.Second}, kindWaiting, time.Second, false, false},
		{"stalled is terminal, no requeue", stalledFailure("", "InvalidSpec", boom), kindStalled, 0, true, true},
		{"stalled with a recheck requeues, no error", rejectedAgain(boom), kindStalled, time.Minute, false, false},
		{"a terminal source error stalls until the next poll", failed("FetchFailed", "InvalidRef", &source.Error{Reason: source.ReasonInvalidRef, Message: "bad"}), kindStalled, poll, false, false},
		{"a retryable source error is transient", failed("FetchFailed", "Unreachable", &source.Error{Reason: source.ReasonUnreachable, Message: "down"}), kindTransient, 0, false, true},
		{"an untyped error is transient", fmt.Errorf("patch status: %w", boom), kindTransient, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := outcomeOf(tc.err, poll)
			assert.Equal(t, tc.kind, o.kind)
			res, err := o.result()
			assert.Equal(t, tc.requeue, res.RequeueAfter)
			assert.Equal(t, tc.returned, err != nil, "error returned: %v", err)
			assert.Equal(t, tc.terminal, errors.Is(err, reconcile.TerminalError(nil)))
			assert.False(t, err != nil && res.RequeueAfter != 0, "never both a requeue and an error")
			if err != nil {
				assert.ErrorIs(t, err, errors.Unwrap(tc.err), "the cause stays reachable")
			}
		})
	}
}

func TestGitRepositoryFinish(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		cond    string
		stalled bool
	}{
		{"transient sets the step condition", failed(v1alpha1.FetchFailedCondition, "Unreachable", errors.New("cannot connect: 100% lost")), v1alpha1.FetchFailedCondition, false},
		{"waiting sets the step condition", waitingFailure(v1alpha1.BuildFailedCondition, "BuildFailed", errors.New("kustomize build failed")), v1alpha1.BuildFailedCondition, false},
		{"stalled sets Stalled", stalledFailure(v1alpha1.FetchFailedCondition, "InvalidSchedule", errors.New("every tuesday")), v1alpha1.FetchFailedCondition, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writes := &statusWrites{}
			rec := events.NewFakeRecorder(10)
			r := &GitRepositoryReconciler{Client: writes, Recorder: rec, Now: func() time.Time { return testNow }}
			gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "g", Generation: 2}}
			run := &gitRun{gr: gr, base: gr.DeepCopy(), result: ctrlResult(time.Minute)}
			_, _ = r.finish(context.Background(), run, tc.err)
			o := outcomeOf(tc.err, 0)
			c := conditions.Get(gr.Status.Conditions, tc.cond)
			require.NotNil(t, c)
			assert.Equal(t, o.reason, c.Reason)
			assert.Equal(t, tc.stalled, conditions.IsTrue(gr.Status.Conditions, v1alpha1.StalledCondition))
			ready := conditions.Get(gr.Status.Conditions, v1alpha1.ReadyCondition)
			require.NotNil(t, ready)
			assert.Equal(t, metav1.ConditionFalse, ready.Status)
			assert.Equal(t, "Warning "+o.reason+" "+o.err.Error(), <-rec.Events, "the message is not a format")
			assert.Equal(t, 1, writes.patches)

			// The same failure again: no event, no status write.
			run = &gitRun{gr: gr, base: gr.DeepCopy(), result: ctrlResult(time.Minute)}
			_, _ = r.finish(context.Background(), run, tc.err)
			assert.Empty(t, rec.Events)
			assert.Equal(t, 1, writes.patches)
		})
	}
}

func TestFinishRetriesAnUnwrittenReport(t *testing.T) {
	writes := &statusWrites{fail: errors.New("conflict")}
	r := &FlinkBlueGreenReconciler{Client: writes, Recorder: events.NewFakeRecorder(10), Now: func() time.Time { return testNow }}
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Name: "job", Generation: 1}}
	res, err := r.finish(context.Background(), p, 0, invalidSpec(errors.New("bad duration")))
	require.Error(t, err)
	assert.False(t, errors.Is(err, reconcile.TerminalError(nil)), "a lost status write is retried")
	assert.Zero(t, res.RequeueAfter)
}

// A stall reports Stalled, Ready=False and Reconciling=False with one
// Warning event; the same stall again costs no write and no event.
func TestFlinkBlueGreenStall(t *testing.T) {
	writes := &statusWrites{}
	rec := events.NewFakeRecorder(10)
	now := testNow
	r := &FlinkBlueGreenReconciler{Client: writes, Recorder: rec, Now: func() time.Time { return now }}
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Name: "job", Generation: 3}}
	res, err := r.finish(context.Background(), p, 0, invalidSpec(errors.New("abortGracePeriod: ten minutes-ish")))
	assert.ErrorIs(t, err, reconcile.TerminalError(nil))
	assert.Zero(t, res.RequeueAfter)
	assert.Equal(t, 1, writes.patches)
	assert.Equal(t, "Warning InvalidSpec abortGracePeriod: ten minutes-ish", <-rec.Events)
	var types []string
	for _, c := range p.Status.Conditions {
		types = append(types, c.Type+"="+string(c.Status))
		assert.Equal(t, "InvalidSpec", c.Reason)
		assert.Equal(t, int64(3), c.ObservedGeneration)
	}
	assert.Equal(t, []string{"Ready=False", "Reconciling=False", "Stalled=True"}, types, "sorted by type")

	now = now.Add(time.Hour)
	_, _ = r.finish(context.Background(), p, 0, invalidSpec(errors.New("abortGracePeriod: ten minutes-ish")))
	assert.Equal(t, 1, writes.patches, "identical conditions, no write")
	assert.Empty(t, rec.Events)
}

func TestMissingFlinkCRDStallsAndRechecks(t *testing.T) {
	writes := &statusWrites{}
	r := &FlinkBlueGreenReconciler{Client: writes, Recorder: events.NewFakeRecorder(10), Now: func() time.Time { return testNow }}
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Name: "job"}}
	noKind := fmt.Errorf("get: %w", &apimeta.NoKindMatchError{GroupKind: v1alpha1.FlinkDeploymentGVK.GroupKind()})
	res, err := r.finish(context.Background(), p, 0, observeFailure(noKind))
	require.NoError(t, err)
	assert.Equal(t, time.Minute, res.RequeueAfter)
	c := conditions.Get(p.Status.Conditions, v1alpha1.StalledCondition)
	require.NotNil(t, c)
	assert.Equal(t, "FlinkCRDMissing", c.Reason)
	assert.Contains(t, c.Message, "install the Flink Kubernetes Operator")
}
