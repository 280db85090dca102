/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of where an object stands for the verbs' --wait.

package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestGitRepositoryIsNotSettledWhileARevisionIsApplied: the reconcile
// acknowledges `reconcile gitrepository --wait` in the status write that
// shows the new revision being applied (startRevision: Reconciling True),
// while Ready still says how the previous reconcile ended (after a broken
// commit, BuildFailed of that commit while its fix is applied). That is
// not where the GitRepository settles: exit 3 with the broken commit's
// error while the fix is applied would be a lie.
func TestGitRepositoryIsNotSettledWhileARevisionIsApplied(t *testing.T) {
	g := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Generation: 1}}
	g.Status.LastAttemptedRevision, g.Status.LastAppliedRevision = rev(shaB), rev(shaA)
	g.Status.Conditions = []metav1.Condition{
		{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "BuildFailed", Message: "missing.yaml", ObservedGeneration: 1},
		{Type: v1alpha1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: "Progressing", Message: "applying revision " + rev(shaB), ObservedGeneration: 1},
	}
	s := gitRepositoryStanding(g)
	assert.False(t, s.settled, s.line)
}
