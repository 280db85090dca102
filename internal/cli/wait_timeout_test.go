/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of --timeout and of auto.

package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestTimeoutFlag(t *testing.T) {
	var f timeoutFlag
	require.NoError(t, f.Set("auto"))
	assert.Equal(t, "auto", f.String())
	require.NoError(t, f.Set("90s"))
	assert.Equal(t, "1m30s", f.String())
	assert.Error(t, f.Set("-1s"))
	assert.Error(t, f.Set("soon"))

	p := stampedFBGD(rev(shaA), v1alpha1.FlinkBlueGreenDeploymentStatus{})
	p.Spec.Configuration = map[string]string{
		v1alpha1.AbortGracePeriodKey: "20 min", v1alpha1.SavepointTimeoutKey: "30 min",
		v1alpha1.DeploymentDeletionDelayKey: "1 min", v1alpha1.RescheduleIntervalKey: "15 s"}
	d, err := autoTimeout(p)
	require.NoError(t, err)
	assert.Equal(t, "52m30s", d.String(), "30m savepoint + 20m grace + 1m deletion delay + 2×15s + 1m margin")
}

// TestTimeoutAutoDoesNotOverflow: timers long enough to mean "never" (an
// abort grace period of 100000 days for a job promoted by hand) each
// parse, but their sum overflows time.Duration. --timeout auto is then as
// long as a wait can be, not a negative duration that would time out at
// once (exit 4).
func TestTimeoutAutoDoesNotOverflow(t *testing.T) {
	p := stampedFBGD(rev(shaA), v1alpha1.FlinkBlueGreenDeploymentStatus{})
	p.Spec.Configuration = map[string]string{
		v1alpha1.AbortGracePeriodKey: "100000 d", v1alpha1.SavepointTimeoutKey: "100000 d"}
	d, err := autoTimeout(p)
	require.NoError(t, err)
	assert.Positive(t, d, "--timeout auto overflowed")
	b, err := (&timeoutFlag{auto: true}).budgetFor(t0, p)
	require.NoError(t, err)
	assert.True(t, b.deadline.After(t0.Add(24*time.Hour)), "deadline %s", b.deadline)
}
