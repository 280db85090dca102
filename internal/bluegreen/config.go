/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// config.go: the timers of a rollout, read from spec.configuration.

package bluegreen

import (
	"fmt"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// timers are the durations read from spec.configuration.
type timers struct {
	grace            time.Duration // new colour must be ready within this
	interval         time.Duration // polling while something is in progress
	deletionDelay    time.Duration // new colour ready → old colour deleted
	savepointTimeout time.Duration // FLIP-503 has none
	snapshotPickup   time.Duration // a snapshot with no status past this: the snapshot controller is off
}

func parseTimers(cfg map[string]string) (timers, error) {
	t := timers{grace: 10 * time.Minute, interval: 15 * time.Second, savepointTimeout: 10 * time.Minute, snapshotPickup: time.Minute}
	for _, kv := range []struct {
		key string
		dst *time.Duration
	}{
		{v1alpha1.AbortGracePeriodKey, &t.grace},
		{v1alpha1.RescheduleIntervalKey, &t.interval},
		{v1alpha1.DeploymentDeletionDelayKey, &t.deletionDelay},
		{v1alpha1.SavepointTimeoutKey, &t.savepointTimeout},
		{v1alpha1.SnapshotPickupTimeoutKey, &t.snapshotPickup},
	} {
		key, dst := kv.key, kv.dst
		s, ok := cfg[key]
		if !ok {
			continue
		}
		d, err := ParseFlinkDuration(s)
		if err != nil {
			return timers{}, fmt.Errorf("spec.configuration[%q]: %w", key, err)
		}
		*dst = d
	}
	if t.interval <= 0 {
		// A zero polling interval would requeue in a hot loop.
		t.interval = time.Second
	}
	return t, nil
}

// AbortGracePeriod is the time a transition's new colour has to become
// ready before it is aborted (spec.configuration's abort grace period,
// 10m by default), as Decide arms the deadline.
func AbortGracePeriod(cfg map[string]string) (time.Duration, error) {
	t, err := parseTimers(cfg)
	return t.grace, err
}
