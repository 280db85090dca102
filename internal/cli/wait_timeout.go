/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// --timeout of every command that waits: a duration, or auto, which the object's
// own timers bound.

package cli

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// timeoutFlag is --timeout: a duration, or "auto" for the longest the
// object's own timers let it take.
type timeoutFlag struct {
	d    time.Duration
	auto bool
}

func (t *timeoutFlag) String() string {
	if t.auto {
		return "auto"
	}
	return t.d.String()
}

func (t *timeoutFlag) Set(s string) error {
	if s == "auto" {
		*t = timeoutFlag{auto: true}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration (30s, 25m) or auto")
	}
	*t = timeoutFlag{d: d}
	return nil
}

func (t *timeoutFlag) Type() string { return "duration|auto" }

// timeoutHelp explains auto, for the flag's usage.
const timeoutHelp = `how long to wait: a duration, or auto: for a FlinkBlueGreenDeployment its own timers ` +
	`(savepoint timeout + abort grace period + deployment deletion delay + two polling intervals + 1m); ` +
	`for a GitRepository its interval + timeout + 1m; a wait for rollouts adds the longest of its FlinkBlueGreenDeployments`

// maxAutoTimeout bounds --timeout auto (a deadline must stay a valid time).
const maxAutoTimeout = 100 * 365 * 24 * time.Hour

// autoMargin is added to every automatic timeout for the controller's own
// reaction time.
const autoMargin = time.Minute

// budgetFor returns the budget of a wait on obj.
func (t *timeoutFlag) budgetFor(now time.Time, obj client.Object) (*budget, error) {
	if !t.auto {
		return newBudget(now, t.d, false), nil
	}
	d, err := autoTimeout(obj)
	if err != nil {
		return nil, err
	}
	return newBudget(now, d, true), nil
}

// autoTimeout is the longest obj's own timers let what is asked take.
func autoTimeout(obj client.Object) (time.Duration, error) {
	switch o := obj.(type) {
	case *v1alpha1.FlinkBlueGreenDeployment:
		d, err := bluegreen.RolloutBound(&o.Spec)
		if err != nil {
			return 0, &exitError{code: 2, err: fmt.Errorf("--timeout auto: fbgd %s/%s: %w", o.Namespace, o.Name, err)}
		}
		if d < 0 || d > maxAutoTimeout-autoMargin {
			// Timers meant as "never" (their sum overflowed into a
			// negative duration): as long as a wait can be.
			return maxAutoTimeout, nil
		}
		return d + autoMargin, nil
	case *v1alpha1.GitRepository:
		return o.GetInterval() + o.GetTimeout() + autoMargin, nil
	}
	return 0, fmt.Errorf("--timeout auto: unknown kind %T", obj)
}
