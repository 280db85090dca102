/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// An in-place change (parallelism.default) restarts blue's stateful job,
// which the simulated operator takes 15 s to start; a suspend committed
// meanwhile stops blue at once: the status goes from RECONCILING to
// SUSPENDED, never FAILING, and the in-place rollout is superseded by the
// suspend's, which succeeds. (Failed on the code as it was: the suspend
// waited for the restart until the 8 s grace period ran out, and the
// in-place change was reported Aborted, "not ready within 8s", before
// blue was suspended.)
func TestASuspendCommittedDuringAStatefulRestartStopsTheJobWithoutAnAbort(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	const slow = `, "bggitops.dev/simulate-start-delay": "15s"`
	deployBlueWith(t, ns, "job", slow)
	const stuck = slow + `, "parallelism.default": "4"`
	update(t, ns, "job", 2, "flink:1.20.0", stuck, withAbortGrace("8s"))
	eventually(t, ns, "the in-place restart", state(t, ns, "job", v1alpha1.TransitioningToBlue, v1alpha1.JobReconciling))

	update(t, ns, "job", 3, "flink:1.20.0", stuck, withAbortGrace("8s"), func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	})
	failing := false
	eventually(t, ns, "SUSPENDED", func() bool {
		failing = failing || getFBGD(t, ns, "job").Status.JobStatus.State == v1alpha1.JobFailing
		return state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobSuspended)()
	})
	p := getFBGD(t, ns, "job")
	assert.False(t, failing, "FAILING was reported on the way to SUSPENDED")
	assert.Empty(t, p.Status.Error)
	h := p.Status.History
	require.GreaterOrEqual(t, len(h), 3)
	assert.Equal(t, revision(3), h[len(h)-1].Revision)
	assert.Equal(t, v1alpha1.RolloutSucceeded, h[len(h)-1].Outcome)
	assert.Equal(t, revision(2), h[len(h)-2].Revision)
	assert.Contains(t, h[len(h)-2].Reason, "superseded by "+revision(3))
}
