/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// The scenarios of the Flink project's FlinkBlueGreenDeploymentControllerTest
// (reference §4) that the tests above do not already cover, re-expressed
// against the real API server with the Flink operator simulator.

func jobState(ns, name string) string {
	c, ok := child(ns, name)
	if !ok {
		return "absent"
	}
	return nested(c, "status", "jobStatus", "state")
}

func jobID(ns, name string) string {
	c, _ := child(ns, name)
	return nested(c, "status", "jobStatus", "jobId")
}

// §4.3 verifySavepointRedeployNonceTriggersTransitionWithInitialSavepointPath
func TestSavepointRedeployUsesTheUserPath(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.0", "", func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
		p.Spec.Template.Spec.Job.InitialSavepointPath = "/user/savepoint-42"
	})
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ := child(ns, "job-green")
	assert.Equal(t, "/user/savepoint-42", nested(green, "spec", "job", "initialSavepointPath"))
	assert.Nil(t, getFBGD(t, ns, "job").Status.Savepoint, "no savepoint is taken for a redeploy")
}

// §4.4 verifySuspendAndResumeInPlace and §4.14 (suspend needs no ready job)
func TestSuspendAndResumeInPlace(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	deployBlue(t, ns, "job")
	suspend := func(state string) func(p *v1alpha1.FlinkBlueGreenDeployment) {
		return func(p *v1alpha1.FlinkBlueGreenDeployment) {
			p.Spec.Template.Spec.Job.State = state
			p.Spec.Template.Spec.Job.Parallelism = ptr(int32(4))
		}
	}
	update(t, ns, "job", 2, "flink:1.20.0", "", suspend(v1alpha1.JobStateSuspended))
	eventually(t, ns, "suspended", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobSuspended))
	assert.Equal(t, "SUSPENDED", jobState(ns, "job-blue"))
	_, green := child(ns, "job-green")
	assert.False(t, green, "suspend is in place: no other colour")

	update(t, ns, "job", 3, "flink:1.20.0", "", suspend(v1alpha1.JobStateRunning))
	eventually(t, ns, "resumed", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	assert.Equal(t, "RUNNING", jobState(ns, "job-blue"))
}

// §4.5 verifySuspendDuringTransitionIsBlockedUntilComplete: a suspend
// that arrives while green starts is held until the cut-over, which waits
// for green to be ready; then it suspends green, in place.
func TestSuspendDuringTransitionWaitsForCutOver(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")
	// Green takes 10 s to start, far longer than the controller takes to
	// observe the suspend: the suspend lands while green is not ready, and
	// the status read below proves it did.
	const slowStart = `, "bggitops.dev/simulate-start-delay": "10s"`
	update(t, ns, "job", 2, "flink:1.20.1", slowStart)
	eventually(t, ns, "transitioning", func() bool {
		_, green := child(ns, "job-green")
		return green && getFBGD(t, ns, "job").Status.BlueGreenState == v1alpha1.TransitioningToGreen
	})
	update(t, ns, "job", 3, "flink:1.20.1", slowStart, func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	})

	// The controller decided on the suspend's generation and kept
	// transitioning: green not ready yet, blue running, nothing suspended.
	p := generationObserved(t, ns, "job")
	require.Equal(t, int64(3), p.Generation)
	require.Equal(t, v1alpha1.TransitioningToGreen, p.Status.BlueGreenState,
		"the suspend was observed mid-transition (job %s, error %q)", p.Status.JobStatus.State, p.Status.Error)
	assert.Nil(t, p.Status.DeploymentReadyTimestamp, "green was not ready when the suspend was observed")
	assert.Equal(t, "job-blue", p.Status.ActiveDeployment)
	assert.Equal(t, "RUNNING", jobState(ns, "job-blue"), "blue keeps running")
	assert.Equal(t, blueJob, jobID(ns, "job-blue"))
	green, _ := child(ns, "job-green")
	assert.NotEqual(t, v1alpha1.JobStateSuspended, nested(green, "spec", "job", "state"), "the suspend waits for the cut-over")

	eventually(t, ns, "green active then suspended", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobSuspended))
	// The Flink operator holds a finalizer while it tears blue down.
	eventually(t, ns, "blue deleted at the cut-over", func() bool {
		_, blue := child(ns, "job-blue")
		return !blue
	})
	assert.Equal(t, "SUSPENDED", jobState(ns, "job-green"))
	green, _ = child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)

	// Blue was deleted only once green was ready: the simulator records
	// when green's job started RUNNING and when blue's job was torn down,
	// and the controller deletes blue only after it read green RUNNING.
	greenRun, ok := sim.Lineage().Job(jobID(ns, "job-green"))
	require.True(t, ok, "green's job ran")
	blueRun, ok := sim.Lineage().Job(blueJob)
	require.True(t, ok)
	require.True(t, blueRun.Stopped, "blue's job was torn down")
	assert.False(t, blueRun.StoppedAt.Before(greenRun.StartedAt),
		"blue's job stopped at %s, before green's started at %s", blueRun.StoppedAt, greenRun.StartedAt)
}

// §4.6 verifyFailureBeforeTransition: the active job is not ready.
func TestNoTransitionFromAJobThatIsNotReady(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	require.NoError(t, env.Client.Create(context.Background(),
		fbgdObject(t, ns, "job", 1, "flink:1.20.0", `, "bggitops.dev/simulate-fail-after": "1500ms"`)))
	eventually(t, ns, "blue failed", func() bool { return jobState(ns, "job-blue") == "FAILED" })
	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-fail-after": "1500ms"`)
	eventually(t, ns, "FAILING", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	assert.Contains(t, getFBGD(t, ns, "job").Status.Error, "not ready")
	idleRequestHandled(t, ns, "job")
	assert.Equal(t, v1alpha1.ActiveBlue, getFBGD(t, ns, "job").Status.BlueGreenState)
	_, green := child(ns, "job-green")
	assert.False(t, green, "no transition starts from a job that is not ready")
}

// §4.10 verifySpecChangeDuringTransition
func TestSpecChangeDuringTransitionIsCarriedToTheNewColour(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "2s"`)
	eventually(t, ns, "transitioning", func() bool {
		return getFBGD(t, ns, "job").Status.BlueGreenState == v1alpha1.TransitioningToGreen
	})
	first := getFBGD(t, ns, "job").Status.Savepoint.Path
	committed := time.Now()
	update(t, ns, "job", 3, "flink:1.20.2", "")
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ := child(ns, "job-green")
	assert.Equal(t, "flink:1.20.2", nested(green, "spec", "image"))
	assert.Equal(t, revision(3), getFBGD(t, ns, "job").Status.ActiveRevision)
	assert.Contains(t, getFBGD(t, ns, "job").Status.LastReconciledSpec, "flink:1.20.2")
	// The re-specced green is deployed anew from a fresh savepoint of
	// blue's job, taken after the commit (the Flink operator reads
	// initialSavepointPath only on a first deployment, and the first
	// savepoint ages while commits arrive).
	restored, ok := sim.Lineage().Job(jobID(ns, "job-green"))
	require.True(t, ok)
	sp, ok := sim.Lineage().Savepoint(restored.RestoredFrom)
	require.True(t, ok, "green's job restored from a savepoint, not %q", restored.RestoredFrom)
	assert.Equal(t, blueJob, sp.JobID, "a savepoint of blue's job")
	assert.Equal(t, sp.Offset, restored.StartOffset, "carrying its offset")
	assert.NotEqual(t, first, restored.RestoredFrom, "not the savepoint taken for the superseded commit")
	assert.True(t, sp.At.After(committed), "the savepoint was taken after the commit")
	h := getFBGD(t, ns, "job").Status.History
	require.GreaterOrEqual(t, len(h), 2)
	superseded := h[len(h)-2]
	assert.Equal(t, revision(2), superseded.Revision)
	assert.Equal(t, v1alpha1.RolloutSuperseded, superseded.Outcome)
	assert.Contains(t, superseded.Reason, "superseded by "+revision(3))
}

// §4.11 verifyFailureBeforeFirstDeployment
func TestFailureBeforeFirstDeploymentRecoversOnAChange(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "job", 1, "flink:broken", neverReady)
	withAbortGrace("2s")(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "first deployment fails", func() bool {
		return getFBGD(t, ns, "job").Status.JobStatus.State == v1alpha1.JobFailing
	})
	update(t, ns, "job", 2, "flink:1.20.0", "")
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
}

// §4.12 verifyPatchScenario: child config → in place; top-level only → nothing.
func TestPatchInPlaceAndTopLevelOnlyChanges(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	deployBlue(t, ns, "job")
	blueGen := func() int64 { c, _ := child(ns, "job-blue"); return c.GetGeneration() }
	before := blueGen()

	update(t, ns, "job", 2, "flink:1.20.0", `, "parallelism.default": "4"`)
	eventually(t, ns, "patched in place", func() bool {
		c, _ := child(ns, "job-blue")
		conf, _, _ := unstructuredString(c.Object, "spec", "flinkConfiguration", "parallelism.default")
		// The child is patched before the status says so: only a status
		// of this generation tells that the patch is done.
		p := getFBGD(t, ns, "job")
		return conf == "4" && p.Status.ObservedGeneration == p.Generation &&
			p.Status.BlueGreenState == v1alpha1.ActiveBlue && p.Status.JobStatus.State == v1alpha1.JobRunning
	})
	_, green := child(ns, "job-green")
	assert.False(t, green, "an in-place patch starts no other colour")
	patched := blueGen()
	assert.Greater(t, patched, before)

	update(t, ns, "job", 3, "flink:1.20.0", `, "parallelism.default": "4"`, func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.RescheduleIntervalKey] = "300ms"
	})
	p := generationObserved(t, ns, "job")
	assert.Equal(t, patched, blueGen(), "a top-level-only change leaves the child untouched")
	assert.Equal(t, v1alpha1.ActiveBlue, p.Status.BlueGreenState)
}

// §4.15 verifyInitialSuspendedIsBlockedThenDeploysOnRunning
func TestInitiallySuspendedDeploysNothingUntilRunning(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	p.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "suspended", func() bool {
		return getFBGD(t, ns, "job").Status.JobStatus.State == v1alpha1.JobSuspended
	})
	_, blue := child(ns, "job-blue")
	assert.False(t, blue)
	update(t, ns, "job", 2, "flink:1.20.0", "")
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
}

func ptr[T any](v T) *T { return &v }
