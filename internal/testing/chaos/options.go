/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// options.go: Options, the settings of Run, and their defaults.

package chaos

import (
	"io"
	"time"
)

// Options configure Run.
type Options struct {
	// Duration is the fault phase: pushes and faults are due within it.
	Duration time.Duration
	// Seed draws the schedule.
	Seed uint64
	// Pace is the density of the schedule; default SoakPace.
	Pace Pace
	// Dir holds every process's data and log. Empty: a new temporary
	// directory, removed at the end unless the run found a violation or
	// KeepDir is set.
	Dir     string
	KeepDir bool
	// Out receives the timeline as it happens; nil discards it.
	Out io.Writer
	// BGGitops is the bg-gitops binary the controller replicas run; empty:
	// this executable with RoleEnv=bg-gitops (the same code).
	BGGitops string
	// SettleTimeout bounds the wait for the system to come to rest after
	// the last commit; default 5 minutes.
	SettleTimeout time.Duration
	// ReadyTimeout bounds the first deployment of every job; default 5
	// minutes.
	ReadyTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Pace == (Pace{}) {
		o.Pace = SoakPace
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.SettleTimeout == 0 {
		o.SettleTimeout = 5 * time.Minute
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 5 * time.Minute
	}
	return o
}
