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
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/flinksim"
)

const neverReady = `, "bggitops.dev/simulate-never-ready": "true"`

// deployBlue creates a FlinkBlueGreenDeployment and waits for ACTIVE_BLUE.
func deployBlue(t testing.TB, ns, name string) (jobID string) {
	t.Helper()
	require.NoError(t, env.Client.Create(context.Background(), fbgdObject(t, ns, name, 1, "flink:1.20.0", "")))
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

	update(t, ns, "job", 2, "flink:broken", neverReady)
	eventually(t, ns, "abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	p := getFBGD(t, ns, "job")
	assert.Contains(t, p.Status.Error, "job-green")
	blue, _ := child(ns, "job-blue")
	assert.Equal(t, "RUNNING", nested(blue, "status", "jobStatus", "state"), "blue still runs")
	assert.Equal(t, blueJob, nested(blue, "status", "jobStatus", "jobId"), "blue was never restarted")
	green, ok := child(ns, "job-green")
	require.True(t, ok)
	assert.Equal(t, "suspended", nested(green, "spec", "job", "state"), "the failed colour is suspended")

	// No retry loop: the same spec stays aborted.
	before := getFBGD(t, ns, "job").Status
	time.Sleep(2 * time.Second)
	after := getFBGD(t, ns, "job").Status
	assert.Equal(t, before.BlueGreenState, after.BlueGreenState)
	assert.Equal(t, before.LastReconciledTimestamp, after.LastReconciledTimestamp)

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
	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "6s"`)
	eventually(t, ns, "abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	annotate(t, ns, "job", v1alpha1.RetryRequestedAtAnnotation)
	eventually(t, ns, "transition retried", func() bool {
		return getFBGD(t, ns, "job").Status.BlueGreenState != v1alpha1.ActiveBlue
	})
	assert.NotEmpty(t, getFBGD(t, ns, "job").Status.LastHandledRetryAt)
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

			update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-savepoint": "`+fault+`"`)
			eventually(t, ns, "savepoint failure", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
			assert.Contains(t, getFBGD(t, ns, "job").Status.Error, "avepoint")
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
	eventually(t, ns, "green ready beside blue", func() bool {
		g, ok := child(ns, "job-green")
		return ok && nested(g, "status", "jobStatus", "state") == "RUNNING"
	})
	time.Sleep(5 * time.Second) // longer than the abort grace period
	p = getFBGD(t, ns, "job")
	assert.Equal(t, v1alpha1.TransitioningToGreen, p.Status.BlueGreenState, "cut-over waits for promote")
	blue, _ = child(ns, "job-blue")
	assert.Equal(t, "RUNNING", nested(blue, "status", "jobStatus", "state"))

	annotate(t, ns, "job", v1alpha1.PromoteRequestedAtAnnotation)
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ := child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)

	update(t, ns, "job", 3, "flink:1.20.2", "", manual)
	eventually(t, ns, "blue ready beside green", func() bool {
		b, ok := child(ns, "job-blue")
		return ok && nested(b, "status", "jobStatus", "state") == "RUNNING"
	})
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

func TestChildDeletedByHandMidTransition(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "3s"`)
	eventually(t, ns, "green created", func() bool { _, ok := child(ns, "job-green"); return ok })
	green, _ := child(ns, "job-green")
	require.NoError(t, env.Client.Delete(context.Background(), green))

	eventually(t, ns, "settled", func() bool {
		p := getFBGD(t, ns, "job")
		return p.Status.BlueGreenState == v1alpha1.ActiveBlue || p.Status.BlueGreenState == v1alpha1.ActiveGreen
	})
	blue, ok := child(ns, "job-blue")
	if getFBGD(t, ns, "job").Status.BlueGreenState == v1alpha1.ActiveBlue {
		require.True(t, ok)
		assert.Equal(t, blueJob, nested(blue, "status", "jobStatus", "jobId"), "blue kept running")
		assert.Equal(t, "RUNNING", nested(blue, "status", "jobStatus", "state"))
	}
	assert.NotEmpty(t, getFBGD(t, ns, "job").Status.Conditions)
}

// TestRestartSafety stops the controller in each phase of a transition and
// starts a new one: the rollout completes with one active job and intact lineage.
func TestRestartSafety(t *testing.T) {
	phases := map[string]func(ns string) bool{
		"savepointing": func(ns string) bool {
			return getFBGD(t, ns, "job").Status.BlueGreenState == v1alpha1.SavepointingBlue
		},
		"transitioning before ready": func(ns string) bool {
			g, ok := child(ns, "job-green")
			return ok && nested(g, "status", "jobStatus", "state") != "RUNNING"
		},
		"ready before delete": func(ns string) bool {
			g, ok := child(ns, "job-green")
			return ok && nested(g, "status", "jobStatus", "state") == "RUNNING"
		},
	}
	for name, reached := range phases {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			stop := startController(t, ns)
			blueJob := deployBlue(t, ns, "job")
			if name == "ready before delete" {
				update(t, ns, "job", 2, "flink:1.20.1", "", withDeletionDelay("3s"))
			} else {
				update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "1500ms"`)
			}
			eventually(t, ns, name, func() bool { return reached(ns) })
			stop()
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

var _ = flinksim.FaultNeverReady
