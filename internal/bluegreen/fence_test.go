/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The sequences of the system around Decide (a second replica, requests
// delivered late, errors that last), each in the model with the
// adapter's fencing: every step is checked against the invariants, and the
// end state against what the sequence must leave.

// readyGreen: TRANSITIONING_TO_GREEN, green ready, the deletion delay over.
var readyGreen = append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN", "reconcile",
	"clock past the next deadline")

func TestStalledCutOverCannotDeleteBlueAfterAnAbort(t *testing.T) {
	m := newModel(v1alpha1.UpgradeModeSavepoint, false)
	scripted(t, m, readyGreen)
	// A decides the cut-over (delete blue, ACTIVE_GREEN) and stalls;
	// green fails; B aborts at the deadline.
	scripted(t, m, []string{"a replica decides, then stalls", "job crashes: GREEN", "clock past the next deadline", "reconcile"})
	for m.P.Status.BlueGreenState != v1alpha1.ActiveBlue {
		scripted(t, m, []string{"clock past the next deadline", "reconcile"})
	}
	scripted(t, m, []string{"the stalled replica's requests land", "reconcile"})
	blue := m.C[Blue]
	require.NotNil(t, blue, "blue exists")
	assert.False(t, blue.Deleting, "blue is not being deleted")
	assert.Equal(t, v1alpha1.ActiveBlue, m.P.Status.BlueGreenState, m.describe())
}

func TestStalledCutOverWhoseStatusLandedIsCompletedByTheNextReplica(t *testing.T) {
	m := newModel(v1alpha1.UpgradeModeSavepoint, false)
	scripted(t, m, readyGreen)
	// A's status (ACTIVE_GREEN) lands, its delete of blue does not: B
	// deletes blue; A's delete, delivered late, finds nothing to do.
	scripted(t, m, []string{"a replica writes its status, then stalls", "reconcile"})
	require.Equal(t, v1alpha1.ActiveGreen, m.P.Status.BlueGreenState)
	require.True(t, m.C[Blue].Deleting, "B completes the cut-over: %s", m.describe())
	scripted(t, m, []string{"deletion completes: BLUE", "commit: new image", "reconcile", "savepoint completes", "reconcile",
		"the stalled replica's requests land"})
	// The new blue (a new object) is not A's blue: the late delete fails
	// on its precondition.
	require.NotNil(t, m.C[Blue], "the new blue exists")
	assert.False(t, m.C[Blue].Deleting, "the new blue is not deleted by A's late request")
}

func TestLateStatusWriteCannotLandOverANewerTransition(t *testing.T) {
	m := newModel(v1alpha1.UpgradeModeSavepoint, false)
	scripted(t, m, activeBlue)
	scripted(t, m, []string{"commit: new image", "a replica decides, then stalls", "reconcile", "savepoint completes", "reconcile"})
	want := m.P.Status.DeepCopy()
	scripted(t, m, []string{"the stalled replica's requests land"})
	assert.Equal(t, want.BlueGreenState, m.P.Status.BlueGreenState, "A's status, decided on ACTIVE_BLUE, did not land")
	assert.Equal(t, want.TargetRevision, m.P.Status.TargetRevision)
}

func TestLastingErrorEndsTheRolloutOnceItsDeadlinePassed(t *testing.T) {
	m := newModel(v1alpha1.UpgradeModeSavepoint, false)
	scripted(t, m, withCommit(activeBlue))
	// The savepoint completes; from then on every request fails: green is
	// never created.
	scripted(t, m, []string{"reconcile", "savepoint completes", "API errors that last (toggle)", "reconcile"})
	require.Equal(t, v1alpha1.TransitioningToGreen, m.P.Status.BlueGreenState, "the status went first; the create is retried")
	for i := 0; i < 20 && m.P.Status.BlueGreenState.InProgress(); i++ {
		scripted(t, m, []string{"clock past the next deadline", "reconcile"})
	}
	assert.Equal(t, v1alpha1.ActiveBlue, m.P.Status.BlueGreenState, m.describe())
	assert.Equal(t, v1alpha1.JobFailing, m.P.Status.JobStatus.State)
	assert.Contains(t, m.P.Status.Error, "kept failing past")
	assert.Contains(t, m.P.Status.Error, unavailable)
	assert.Nil(t, m.C[Green], "green never started")
}

func TestLastingErrorEndsARestartedTransitionWithinItsTimers(t *testing.T) {
	m := newModel(v1alpha1.UpgradeModeSavepoint, false)
	scripted(t, m, toGreen)
	// A commit restarts green from a fresh savepoint of blue; every request
	// fails from then on.
	scripted(t, m, []string{"commit: new image", "API errors that last (toggle)", "reconcile"})
	for i := 0; i < 20 && (m.P.Status.BlueGreenState.Transitioning() || m.P.Status.BlueGreenState.Savepointing()); i++ {
		scripted(t, m, []string{"clock past the next deadline", "reconcile"})
	}
	assert.Equal(t, v1alpha1.ActiveBlue, m.P.Status.BlueGreenState, m.describe())
	assert.Equal(t, v1alpha1.JobFailing, m.P.Status.JobStatus.State)
	assert.NotNil(t, m.C[Blue])
	assert.False(t, m.C[Blue].Deleting)
}

func TestNewColourNeverStartsFromAnAgedSavepoint(t *testing.T) {
	m := newModel(v1alpha1.UpgradeModeSavepoint, false)
	scripted(t, m, withCommit(activeBlue))
	scripted(t, m, []string{"reconcile", "savepoint completes"})
	first := m.P.Status.Savepoint.Name
	// The controller does not reconcile until the savepoint has aged.
	m.Now = m.Now.Add(mSpTime + 2*time.Second)
	in := m.input()
	d, err := Decide(in)
	require.NoError(t, err)
	require.Len(t, d.Actions, 1)
	assert.Equal(t, CreateSnapshot, d.Actions[0].Type, "a fresh savepoint, not green from %s", first)
	assert.NotEqual(t, first, d.Status.Savepoint.Name)
	assert.True(t, strings.Contains(describeEvents(d.Events), "SavepointRefreshed"))
	// The fresh one aged too: the rollout fails, blue untouched.
	scripted(t, m, []string{"reconcile", "savepoint completes"})
	m.Now = m.Now.Add(mSpTime + 2*time.Second)
	scripted(t, m, []string{"reconcile"})
	assert.Equal(t, v1alpha1.ActiveBlue, m.P.Status.BlueGreenState)
	assert.Contains(t, m.P.Status.Error, "twice")
}
