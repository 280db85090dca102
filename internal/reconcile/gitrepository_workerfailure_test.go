/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func workerRun(annotations map[string]string, handled string) *gitRun {
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app", Annotations: annotations}}
	gr.Spec.Path = "deploy"
	gr.Status.LastHandledReconcileAt = handled
	return &gitRun{gr: gr, base: gr.DeepCopy()}
}

// TestRemovedReconcileAnnotationKeepsDeadRevisionSkipped: once a requested
// reconcile was handled, removing the annotation asks for nothing: a
// revision whose worker died stays skipped.
func TestRemovedReconcileAnnotationKeepsDeadRevisionSkipped(t *testing.T) {
	run := workerRun(nil, "T1")
	run.gr.Status.LastWorkerFailure = &v1alpha1.WorkerFailure{Stage: v1alpha1.WorkerStageBuild, Revision: "main@sha1:1", Path: "deploy", Message: "died"}
	assert.False(t, run.requested())
	assert.NotNil(t, knownBuildFailure(run, "main@sha1:1"), "still skipped")
	assert.Nil(t, knownBuildFailure(run, "main@sha1:2"), "another revision is built")

	asked := workerRun(map[string]string{v1alpha1.ReconcileRequestedAtAnnotation: "T2"}, "T1")
	asked.gr.Status.LastWorkerFailure = run.gr.Status.LastWorkerFailure
	assert.True(t, asked.requested())
	assert.Nil(t, knownBuildFailure(asked, "main@sha1:1"), "a new request builds it again")
}

// TestRepeatedWorkerDeathDoesNotRewriteStatus: the same fetch or build
// dying the same way again (its measured peak differs) keeps the record,
// time and message, as it is; another limit, or another revision,
// replaces it.
func TestRepeatedWorkerDeathDoesNotRewriteStatus(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	r := &GitRepositoryReconciler{Now: func() time.Time { return now }}
	run := workerRun(nil, "")
	r.recordWorkerFailure(run, v1alpha1.WorkerFailure{Stage: v1alpha1.WorkerStageBuild, Revision: "main@sha1:1", Path: "deploy", Message: "memory limit (peak resident 200 MiB)"})
	first := *run.gr.Status.LastWorkerFailure
	now = now.Add(time.Minute)
	r.recordWorkerFailure(run, v1alpha1.WorkerFailure{Stage: v1alpha1.WorkerStageBuild, Revision: "main@sha1:1", Path: "deploy", Message: "memory limit (peak resident 210 MiB)"})
	assert.Equal(t, first, *run.gr.Status.LastWorkerFailure)
	r.recordWorkerFailure(run, v1alpha1.WorkerFailure{Stage: v1alpha1.WorkerStageBuild, Revision: "main@sha1:1", Path: "deploy", Message: "CPU time limit"})
	assert.Equal(t, "CPU time limit", run.gr.Status.LastWorkerFailure.Message, "a retry that died of another limit says so")
	now = now.Add(time.Minute)
	r.recordWorkerFailure(run, v1alpha1.WorkerFailure{Stage: v1alpha1.WorkerStageBuild, Revision: "main@sha1:2", Path: "deploy", Message: "stack"})
	assert.Equal(t, "main@sha1:2", run.gr.Status.LastWorkerFailure.Revision)
	assert.True(t, run.gr.Status.LastWorkerFailure.Time.Time.Equal(now))
}
