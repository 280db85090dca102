/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// schedule.go: ParseSchedule and NextPoll — the next poll from a cron
// schedule, or the interval with jitter.

package source

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/robfig/cron/v3"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Jitter is the fraction by which an interval is randomly stretched or
// shrunk, so objects created together do not poll in lockstep.
const Jitter = 0.05

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses a robfig/cron expression (five fields or a
// descriptor such as @hourly, with an optional CRON_TZ= or TZ= prefix).
func ParseSchedule(expr string) (cron.Schedule, error) {
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("spec.schedule %q is not a valid cron expression (five fields, e.g. \"*/5 * * * *\", optional CRON_TZ=<zone> prefix): %v", expr, err)
	}
	// The CRD refuses short @every schedules too; this catches objects
	// stored before it did.
	if every, ok := s.(cron.ConstantDelaySchedule); ok && every.Delay < v1alpha1.MinInterval {
		return nil, fmt.Errorf("spec.schedule %q polls more often than every %s", expr, v1alpha1.MinInterval)
	}
	return s, nil
}

// NextPoll is how long to wait before the next poll of gr: the next cron
// activation of spec.schedule, or spec.interval with ±5% jitter.
func NextPoll(gr *v1alpha1.GitRepository, now time.Time) (time.Duration, error) {
	if gr.Spec.Schedule != "" {
		s, err := ParseSchedule(gr.Spec.Schedule)
		if err != nil {
			return 0, err
		}
		next := s.Next(now)
		if next.IsZero() {
			return 0, fmt.Errorf("spec.schedule %q never fires", gr.Spec.Schedule)
		}
		return next.Sub(now), nil
	}
	return jitter(gr.GetInterval()), nil
}

func jitter(d time.Duration) time.Duration {
	f := 1 + Jitter*(2*rand.Float64()-1)
	return time.Duration(float64(d) * f)
}
