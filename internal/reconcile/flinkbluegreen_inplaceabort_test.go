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

// An in-place change (parallelism.default) that the simulated operator
// takes 6 s to observe aborts at the 3 s grace period, leaving blue as it
// is. Once blue runs the change, the status follows it: RUNNING, no
// error. A retry then watches blue again and ends in a succeeded in-place
// rollout of the same revision. (Failed on the code as it was: FAILING
// stayed, and the retry was only acknowledged.)
func TestAnInPlaceAbortFollowsTheJobAndRetryActs(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	const slow = `, "bggitops.dev/simulate-observe-delay": "6s"`
	deployBlueWith(t, ns, "job", slow)

	update(t, ns, "job", 2, "flink:1.20.0", slow+`, "parallelism.default": "4"`, withAbortGrace("3s"))
	eventually(t, ns, "the in-place abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	assert.Contains(t, getFBGD(t, ns, "job").Status.Error, "in-place change of job-blue did not complete")
	eventually(t, ns, "RUNNING once blue runs the change", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	p := getFBGD(t, ns, "job")
	assert.Empty(t, p.Status.Error)

	annotate(t, ns, "job", v1alpha1.RetryRequestedAtAnnotation)
	eventually(t, ns, "the retry's in-place rollout succeeded", func() bool {
		h := getFBGD(t, ns, "job").Status.History
		last := h[len(h)-1]
		return len(h) >= 3 && last.Kind == v1alpha1.RolloutInPlace && last.Outcome == v1alpha1.RolloutSucceeded
	})
	p = getFBGD(t, ns, "job")
	require.Equal(t, v1alpha1.JobRunning, p.Status.JobStatus.State)
	assert.Equal(t, revision(2), p.Status.History[len(p.Status.History)-1].Revision)
}
