/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pace.go: Pace, how dense the schedule is: SoakPace (make chaos) and
// ShortPace (the variant in make test).

package chaos

import "time"

// span is a range of durations a random draw falls in.
type span struct{ Min, Max time.Duration }

// Pace is how dense the schedule is: the gaps between pushes and between
// faults, and how long a fault holds a component down, paused or slow.
type Pace struct {
	PushGap  span
	FaultGap span
	// Hold scales the documented hold times of every fault (1: as listed
	// in faults.go).
	Hold float64
	// FinishGap separates the two rounds of finishing commits.
	FinishGap time.Duration
}

// SoakPace is the pace of `make chaos`: a commit every 24 s and a fault
// every 30 s on average, about 150 of each per hour.
var SoakPace = Pace{
	PushGap:   span{12 * time.Second, 36 * time.Second},
	FaultGap:  span{10 * time.Second, 40 * time.Second},
	Hold:      1,
	FinishGap: time.Minute,
}

// ShortPace is the pace of the variant in `make test`: denser, with
// shorter outages, so that a few minutes hold every kind of fault.
var ShortPace = Pace{
	PushGap:   span{8 * time.Second, 18 * time.Second},
	FaultGap:  span{4 * time.Second, 10 * time.Second},
	Hold:      0.5,
	FinishGap: 30 * time.Second,
}
