/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The timers read from spec.configuration, and the rollout bound built
// on them.

// Without spec.configuration: a grace period of 10 minutes, polled every
// 15 seconds.
func TestTimerDefaults(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Configuration = nil
	d := w.step()
	w.expectTime("abortTimestamp", w.status().AbortTimestamp, t0.Add(10*time.Minute))
	w.expectRequeue(d, 15*time.Second)
}

// RolloutBound adds four timers that each parse up to ~292 years: their
// sum wraps around (two of 100000 days give a negative bound; three can
// give a small positive one). The CLI's --timeout auto is built on it.
func TestRolloutBoundDoesNotOverflow(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		cfg := map[string]string{}
		keys := []string{v1alpha1.AbortGracePeriodKey, v1alpha1.SavepointTimeoutKey, v1alpha1.DeploymentDeletionDelayKey, v1alpha1.RescheduleIntervalKey}
		for _, k := range keys[:n] {
			cfg[k] = "100000 d"
		}
		d, err := RolloutBound(&v1alpha1.FlinkBlueGreenDeploymentSpec{Configuration: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if d < 100000*24*time.Hour {
			t.Errorf("%d timers of 100000 days: bound %s", n, d)
		}
	}
}
