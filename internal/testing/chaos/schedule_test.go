/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package chaos

import (
	"testing"
	"time"
)

// The seed decides the schedule: the same seed gives the same commits
// (content included) and faults, another seed others.
func TestScheduleIsReproducible(t *testing.T) {
	a := NewSchedule(42, 10*time.Minute, SoakPace)
	b := NewSchedule(42, 10*time.Minute, SoakPace)
	c := NewSchedule(43, 10*time.Minute, SoakPace)
	if a.Describe() != b.Describe() || a.Digest() != b.Digest() {
		t.Fatal("one seed, two schedules")
	}
	if a.Digest() == c.Digest() {
		t.Fatal("two seeds, one schedule")
	}
	if len(a.Pushes) < 10 || len(a.Faults) < 10 {
		t.Fatalf("%d pushes, %d faults in 10 minutes", len(a.Pushes), len(a.Faults))
	}
	t.Log(a.Describe())
}
