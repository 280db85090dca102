/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// bound.go: RolloutBound, the longest a blue/green rollout runs by its own
// timers.

package bluegreen

import (
	"math"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// RolloutBound is the longest a blue/green rollout of spec runs by its own
// timers: the savepoint timeout, the abort grace period of the new colour,
// the deletion delay of the old one, and two polling intervals. It leaves
// out what has no bound: a closed rollout window and, in promotion mode
// Manual, the wait for `bg-gitops promote`.
func RolloutBound(spec *v1alpha1.FlinkBlueGreenDeploymentSpec) (time.Duration, error) {
	t, err := parseTimers(spec.Configuration)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, d := range []time.Duration{t.savepointTimeout, t.grace, t.deletionDelay, t.interval, t.interval} {
		if d > math.MaxInt64-sum {
			return math.MaxInt64, nil // timers meant as "never": no overflow into a negative bound
		}
		sum += d
	}
	return sum, nil
}
