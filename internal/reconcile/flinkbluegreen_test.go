/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

const neverReady = `, "bggitops.dev/simulate-never-ready": "true"`

// deployBlue creates a FlinkBlueGreenDeployment and waits for ACTIVE_BLUE.
func deployBlue(t testing.TB, ns, name string) (jobID string) {
	t.Helper()
	return deployBlueWith(t, ns, name, "")
}

// deployBlueWith is deployBlue with extra flinkConfiguration (faults of
// blue's job, such as a savepoint delay).
func deployBlueWith(t testing.TB, ns, name, extraConf string) (jobID string) {
	t.Helper()
	require.NoError(t, env.Client.Create(context.Background(), fbgdObject(t, ns, name, 1, "flink:1.20.0", extraConf)))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, name, v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, ok := child(ns, name+"-blue")
	require.True(t, ok)
	return nested(blue, "status", "jobStatus", "jobId")
}

func TestFirstDeploymentThenStatefulTransition(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")

	blue, _ := child(ns, "job-blue")
	assert.Equal(t, "BLUE", blue.GetLabels()["flink/blue-green-deployment-type"])
	require.Len(t, blue.GetOwnerReferences(), 1)
	assert.Equal(t, "job", blue.GetOwnerReferences()[0].Name)
	assert.Equal(t, revision(1), blue.GetAnnotations()[v1alpha1.RevisionAnnotation])
	p := getFBGD(t, ns, "job")
	assert.Equal(t, revision(1), p.Status.ActiveRevision)
	assert.Equal(t, "job-blue", p.Status.ActiveDeployment)
	assert.True(t, apimeta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ReadyCondition))

	update(t, ns, "job", 2, "flink:1.20.1", "")
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	eventually(t, ns, "blue deleted", func() bool { _, ok := child(ns, "job-blue"); return !ok })

	p = getFBGD(t, ns, "job")
	assert.Equal(t, revision(2), p.Status.ActiveRevision)
	require.NotNil(t, p.Status.Savepoint)
	green, ok := child(ns, "job-green")
	require.True(t, ok)
	assert.Equal(t, "flink:1.20.1", nested(green, "spec", "image"))
	assertRestoredFrom(t, green, blueJob)
}

// assertRestoredFrom proves the lineage: the new job restored from a
// savepoint taken from the job it replaced, carrying its offset.
func assertRestoredFrom(t *testing.T, newChild interface{ GetName() string }, oldJob string) {
	t.Helper()
	c, _ := child(newChildNamespace(newChild), newChild.GetName())
	path := nested(c, "spec", "job", "initialSavepointPath")
	require.NotEmpty(t, path, "the new child starts from a savepoint")
	sp, ok := sim.Lineage().Savepoint(path)
	require.True(t, ok, "savepoint %s was taken by the simulator", path)
	assert.Equal(t, oldJob, sp.JobID, "the savepoint was taken from the job it replaced")
	job, ok := sim.Lineage().Job(nested(c, "status", "jobStatus", "jobId"))
	require.True(t, ok)
	assert.Equal(t, sp.Offset, job.StartOffset, "the new job carries the savepoint's offset")
	assert.Positive(t, sp.Offset)
}

func newChildNamespace(o interface{ GetName() string }) string {
	if n, ok := o.(interface{ GetNamespace() string }); ok {
		return n.GetNamespace()
	}
	return ""
}

func TestAbortKeepsBlueRunningAndDoesNotRetryInALoop(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")

	update(t, ns, "job", 2, "flink:broken", neverReady, withAbortGrace("2s"))
	eventually(t, ns, "abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	p := getFBGD(t, ns, "job")
	assert.Contains(t, p.Status.Error, "job-green")
	blue, _ := child(ns, "job-blue")
	assert.Equal(t, "RUNNING", nested(blue, "status", "jobStatus", "state"), "blue still runs")
	assert.Equal(t, blueJob, nested(blue, "status", "jobStatus", "jobId"), "blue was never restarted")
	// The abort is written to the status before the failed colour is
	// suspended (every child write goes status-first).
	eventually(t, ns, "the failed colour is suspended", func() bool {
		green, ok := child(ns, "job-green")
		return ok && nested(green, "spec", "job", "state") == "suspended"
	})
	green, _ := child(ns, "job-green")

	// No retry loop: a later decision on the same spec keeps it aborted.
	before := getFBGD(t, ns, "job").Status
	idleRequestHandled(t, ns, "job")
	after := getFBGD(t, ns, "job").Status
	assert.Equal(t, v1alpha1.ActiveBlue, after.BlueGreenState)
	assert.Equal(t, v1alpha1.JobFailing, after.JobStatus.State)
	assert.Equal(t, before.LastReconciledTimestamp, after.LastReconciledTimestamp, "the aborted spec was not taken up again")
	assert.Equal(t, before.Savepoint, after.Savepoint, "no new savepoint")
	again, _ := child(ns, "job-green")
	assert.Equal(t, green.GetGeneration(), again.GetGeneration(), "the aborted colour is left suspended")
	assert.Equal(t, blueJob, jobID(ns, "job-blue"))

	// A fixing commit rolls out.
	update(t, ns, "job", 3, "flink:1.20.2", "")
	eventually(t, ns, "ACTIVE_GREEN after the fix", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ = child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)
}

func TestRetryAnnotationRetriesTheAbortedSpec(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.1", neverReady, withAbortGrace("2s"))
	eventually(t, ns, "abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	first := getFBGD(t, ns, "job").Status.Savepoint
	require.NotNil(t, first)
	annotate(t, ns, "job", v1alpha1.RetryRequestedAtAnnotation)
	want := getFBGD(t, ns, "job").Annotations[v1alpha1.RetryRequestedAtAnnotation]
	// A retry is acknowledged when its transition starts, in the same
	// status write as the new savepoint (one acknowledged and ignored would
	// keep the old one).
	eventually(t, ns, "retry acknowledged", func() bool {
		return getFBGD(t, ns, "job").Status.LastHandledRetryAt == want
	})
	sp := getFBGD(t, ns, "job").Status.Savepoint
	require.NotNil(t, sp)
	assert.NotEqual(t, first.Name, sp.Name, "the retry savepointed blue again: the transition started over")
}

func TestSavepointFailureLeavesBlueUntouched(t *testing.T) {
	for _, fault := range []string{"fail", "hang"} {
		t.Run(fault, func(t *testing.T) {
			ns := newNamespace(t)
			startController(t, ns)
			require.NoError(t, env.Client.Create(context.Background(),
				fbgdObject(t, ns, "job", 1, "flink:1.20.0", `, "bggitops.dev/simulate-savepoint": "`+fault+`"`)))
			eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
			blue, _ := child(ns, "job-blue")
			jobID := nested(blue, "status", "jobStatus", "jobId")

			// The simulator fails the savepoint at once, or never
			// completes it: only the hang is left to the timeout.
			cause, mutate := "simulated savepoint failure", withSavepointTimeout("10 min")
			if fault == "hang" {
				cause, mutate = "did not complete within 2s", withSavepointTimeout("2s")
			}
			update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-savepoint": "`+fault+`"`, mutate)
			eventually(t, ns, "savepoint failure", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
			assert.Contains(t, getFBGD(t, ns, "job").Status.Error, cause)
			blue, _ = child(ns, "job-blue")
			assert.Equal(t, jobID, nested(blue, "status", "jobStatus", "jobId"))
			assert.Equal(t, "RUNNING", nested(blue, "status", "jobStatus", "state"))
			_, greenExists := child(ns, "job-green")
			assert.False(t, greenExists, "no green was started without a savepoint")
		})
	}
}

func TestManualPromotion(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ := child(ns, "job-blue")
	blueJob := nested(blue, "status", "jobStatus", "jobId")

	manual := func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	}
	update(t, ns, "job", 2, "flink:1.20.1", "", manual)
	// The decision that sees green ready is the one that would cut over:
	// it records the readiness and waits for a promotion instead. (That
	// the abort deadline passing does not end the wait is
	// bluegreen.TestManualPromotion's to show; here it is far.)
	waitingForPromotion(t, ns, "job", v1alpha1.TransitioningToGreen)
	green, _ := child(ns, "job-green")
	assert.Equal(t, "RUNNING", nested(green, "status", "jobStatus", "state"))
	p = getFBGD(t, ns, "job")
	assert.Equal(t, v1alpha1.TransitioningToGreen, p.Status.BlueGreenState, "cut-over waits for promote")
	blue, _ = child(ns, "job-blue")
	assert.Equal(t, "RUNNING", nested(blue, "status", "jobStatus", "state"))

	annotate(t, ns, "job", v1alpha1.PromoteRequestedAtAnnotation)
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ = child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)

	// Not "job-blue RUNNING": the blue deleted at the cut-over reports
	// RUNNING until the Flink operator has torn it down.
	update(t, ns, "job", 3, "flink:1.20.2", "", manual)
	waitingForPromotion(t, ns, "job", v1alpha1.TransitioningToBlue)
	annotate(t, ns, "job", v1alpha1.AbortRequestedAtAnnotation)
	eventually(t, ns, "abort keeps green", func() bool {
		p := getFBGD(t, ns, "job")
		b, _ := child(ns, "job-blue")
		return p.Status.BlueGreenState == v1alpha1.ActiveGreen && nested(b, "spec", "job", "state") == "suspended"
	})
	green, _ = child(ns, "job-green")
	assert.Equal(t, "RUNNING", nested(green, "status", "jobStatus", "state"))
}

func TestInvalidDurationStallsWithoutTouchingTheJob(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")
	p := getFBGD(t, ns, "job")
	p.Spec.Configuration[v1alpha1.AbortGracePeriodKey] = "ten minutes-ish"
	p.Spec.Template.Spec.Image = "flink:1.20.9"
	require.NoError(t, env.Client.Update(context.Background(), p))
	eventually(t, ns, "Stalled", func() bool {
		return apimeta.IsStatusConditionTrue(getFBGD(t, ns, "job").Status.Conditions, v1alpha1.StalledCondition)
	})
	c := apimeta.FindStatusCondition(getFBGD(t, ns, "job").Status.Conditions, v1alpha1.StalledCondition)
	assert.Contains(t, c.Message, v1alpha1.AbortGracePeriodKey)
	blue, _ := child(ns, "job-blue")
	assert.Equal(t, blueJob, nested(blue, "status", "jobStatus", "jobId"))
	assert.Equal(t, "flink:1.20.0", nested(blue, "spec", "image"))
}

// TestChildDeletedByHandMidTransition: a new colour deleted by hand while it
// starts is created again from the same savepoint, before the abort
// deadline, and the rollout completes with the old job's state.
func TestChildDeletedByHandMidTransition(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")
	// The deadline is far: the deletion, not the clock, decides the outcome.
	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "3s"`, func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration["kubernetes.operator.bluegreen.abort.grace-period"] = "10m"
	})
	eventually(t, ns, "green created", func() bool { _, ok := child(ns, "job-green"); return ok })
	green, _ := child(ns, "job-green")
	path := nested(green, "spec", "job", "initialSavepointPath")
	require.NotEmpty(t, path)
	require.NoError(t, env.Client.Delete(context.Background(), green))

	// Green is created again from the same savepoint of blue, and the
	// transition completes with blue's state.
	eventually(t, ns, "green created again", func() bool {
		g, ok := child(ns, "job-green")
		return ok && g.GetUID() != green.GetUID()
	})
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	eventually(t, ns, "blue deleted", func() bool { _, ok := child(ns, "job-blue"); return !ok })
	again, _ := child(ns, "job-green")
	assert.Equal(t, path, nested(again, "spec", "job", "initialSavepointPath"), "the same savepoint")
	assertRestoredFrom(t, again, blueJob)
	assert.Equal(t, revision(2), getFBGD(t, ns, "job").Status.ActiveRevision)
}

// TestRestartSafety stops the controller in each phase of a transition and
// starts a new one: the rollout completes with one active job and intact
// lineage. Each phase is made to last (a savepoint delay, a start delay, a
// deletion delay), is recognised by facts, and is proven held after the
// stop: with no controller running, the parent's status cannot move on.
func TestRestartSafety(t *testing.T) {
	type phase struct {
		// blueConf, conf and mutate make the phase last: blueConf is in
		// both commits (a fault of blue's job), conf in the second only.
		blueConf, conf string
		mutate         func(*v1alpha1.FlinkBlueGreenDeployment)
		// reached recognises the phase; held is what must still be true
		// once the controller has stopped.
		reached, held func(t *testing.T, ns string) bool
	}
	transitioning := func(t *testing.T, ns string) bool {
		p := getFBGD(t, ns, "job")
		return p.Status.BlueGreenState == v1alpha1.TransitioningToGreen && p.Status.DeploymentReadyTimestamp == nil
	}
	// readyBlueKept: the controller has recorded green ready and not yet
	// deleted blue.
	readyBlueKept := func(t *testing.T, ns string) bool {
		p := getFBGD(t, ns, "job")
		blue, ok := child(ns, "job-blue")
		return p.Status.BlueGreenState == v1alpha1.TransitioningToGreen && p.Status.DeploymentReadyTimestamp != nil &&
			ok && blue.GetDeletionTimestamp() == nil
	}
	phases := map[string]phase{
		"savepointing": {
			// The savepoint is of blue's job: blue carries the delay.
			blueConf: `, "bggitops.dev/simulate-savepoint-delay": "3s"`,
			// The uid of the snapshot's create is recorded: a stop
			// between the create and that write fails the rollout
			// safe instead (TestASnapshotWhoseUIDWasNotRecordedBeforeARestartFailsSafe).
			reached: func(t *testing.T, ns string) bool {
				p := getFBGD(t, ns, "job")
				return p.Status.BlueGreenState == v1alpha1.SavepointingBlue && p.Status.Savepoint != nil && p.Status.Savepoint.UID != ""
			},
			held: func(t *testing.T, ns string) bool {
				return getFBGD(t, ns, "job").Status.BlueGreenState == v1alpha1.SavepointingBlue
			},
		},
		"transitioning before ready": {
			conf: `, "bggitops.dev/simulate-start-delay": "3s"`,
			reached: func(t *testing.T, ns string) bool {
				g, ok := child(ns, "job-green")
				return ok && nested(g, "status", "jobStatus", "state") != "RUNNING" && transitioning(t, ns)
			},
			held: transitioning,
		},
		"ready before delete": {
			mutate:  withDeletionDelay("3s"),
			reached: readyBlueKept,
			held:    readyBlueKept,
		},
	}
	for name, ph := range phases {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			stop := startController(t, ns)
			blueJob := deployBlueWith(t, ns, "job", ph.blueConf)
			var mutate []func(*v1alpha1.FlinkBlueGreenDeployment)
			if ph.mutate != nil {
				mutate = append(mutate, ph.mutate)
			}
			update(t, ns, "job", 2, "flink:1.20.1", ph.blueConf+ph.conf, mutate...)
			eventually(t, ns, name, func() bool { return ph.reached(t, ns) })
			stop()
			require.True(t, ph.held(t, ns), "the controller stopped %s", name)
			startController(t, ns)
			eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
			eventually(t, ns, "blue deleted", func() bool { _, ok := child(ns, "job-blue"); return !ok })
			green, _ := child(ns, "job-green")
			assertRestoredFrom(t, green, blueJob)
		})
	}
}

func withDeletionDelay(d string) func(*v1alpha1.FlinkBlueGreenDeployment) {
	return func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.DeploymentDeletionDelayKey] = d
	}
}

// withAbortGrace shortens the abort grace period for a test whose abort
// must fire; the new colour must then never become ready (neverReady, an
// observe delay), so that the timer has nothing to race.
func withAbortGrace(d string) func(*v1alpha1.FlinkBlueGreenDeployment) {
	return func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.AbortGracePeriodKey] = d
	}
}

// withSavepointTimeout shortens the savepoint timeout for a test whose
// savepoint hangs.
func withSavepointTimeout(d string) func(*v1alpha1.FlinkBlueGreenDeployment) {
	return func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.SavepointTimeoutKey] = d
	}
}

// waitingForPromotion waits until the controller has seen the new colour
// ready and waits for a promotion, in the given transition state.
func waitingForPromotion(t testing.TB, ns, name string, st v1alpha1.BlueGreenState) {
	t.Helper()
	eventually(t, ns, "new colour ready, waiting for promotion", func() bool {
		p := getFBGD(t, ns, name)
		c := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ReconcilingCondition)
		return p.Status.BlueGreenState == st && p.Status.DeploymentReadyTimestamp != nil &&
			c != nil && c.Reason == "WaitingForPromotion"
	})
}

// idleRequestHandled proves that the controller has decided on the object
// as it is now: it requests a promotion and waits until status
// acknowledges it. Nothing waits for a promotion in an ACTIVE_* state, so
// Decide acknowledges the request (and ignores it) in the same decision
// that would act on the spec, the children and the clock; the decision's
// actions run before its status write. A promotion requested while a
// transition runs is acknowledged only at its cut-over, so a transition
// that (re)started makes this wait fail.
func idleRequestHandled(t testing.TB, ns, name string) {
	t.Helper()
	annotate(t, ns, name, v1alpha1.PromoteRequestedAtAnnotation)
	want := getFBGD(t, ns, name).Annotations[v1alpha1.PromoteRequestedAtAnnotation]
	eventually(t, ns, "the promote request acknowledged", func() bool {
		return getFBGD(t, ns, name).Status.LastHandledPromoteAt == want
	})
}

// generationObserved waits until the controller has decided on the
// object's current generation: Decide records it in
// status.observedGeneration, after the decision's actions have run.
func generationObserved(t testing.TB, ns, name string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	var p *v1alpha1.FlinkBlueGreenDeployment
	eventually(t, ns, "generation observed", func() bool {
		p = getFBGD(t, ns, name)
		return p.Status.ObservedGeneration == p.Generation
	})
	return p
}

var _ = flinksim.FaultNeverReady
