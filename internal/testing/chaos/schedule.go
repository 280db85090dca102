/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// schedule.go: Schedule, the commits and faults the seed decides
// (NewSchedule), with its Digest and Describe.

package chaos

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Schedule is everything the seed decides: the commits, in order, with
// their content, and the faults, each with when it is due (measured from
// the start of the fault phase) and its parameters.
type Schedule struct {
	Seed     uint64
	Duration time.Duration
	// Seeds are the first commit of each repository, pushed before the
	// fault phase.
	Seeds []*Push
	// Pushes are due during the fault phase; Finish after it: the commits
	// that bring every job back to a plain running spec, so the end state
	// says whether each recovered.
	Pushes, Finish []*Push
	Faults         []*Fault
}

// Streams of the seed: each draws from its own generator, so that adding
// a kind of fault does not change the commits, and the other way round.
const (
	streamPushes = iota + 1
	streamFaults
	streamPeople
)

func newRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// NewSchedule draws the schedule of a run of length d from seed.
func NewSchedule(seed uint64, d time.Duration, pace Pace) *Schedule {
	s := &Schedule{Seed: seed, Duration: d}
	m := newModel(newRand(seed, streamPushes))
	s.Seeds = m.seeds()
	for at := draw(m.rnd, pace.PushGap); at < d; at += draw(m.rnd, pace.PushGap) {
		s.Pushes = append(s.Pushes, m.next(at))
	}
	s.Finish = m.finish(d, pace.FinishGap)
	s.Faults = newFaults(newRand(seed, streamFaults), d, pace)
	return s
}

// Digest identifies the schedule: two runs with the same seed, duration
// and pace print the same digest.
func (s *Schedule) Digest() string {
	h := sha256.New()
	for _, p := range s.all() {
		fmt.Fprintf(h, "push %d %s %s %s\n", p.At, p.Repo, p.Kind, p.Job)
		for _, name := range sortedKeys(p.Files) {
			fmt.Fprintf(h, "%s\n%s", name, p.Files[name])
		}
	}
	for _, f := range s.Faults {
		fmt.Fprintf(h, "fault %s\n", f)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func (s *Schedule) all() []*Push {
	out := append([]*Push{}, s.Seeds...)
	out = append(out, s.Pushes...)
	return append(out, s.Finish...)
}

// Describe lists the schedule, one line per event, for the log.
func (s *Schedule) Describe() string {
	var b strings.Builder
	for _, p := range s.all() {
		fmt.Fprintf(&b, "%7.1fs push #%d %s %s\n", p.At.Seconds(), p.Seq, p.Repo, p.describe())
	}
	for _, f := range s.Faults {
		fmt.Fprintf(&b, "%7.1fs fault %s\n", f.At.Seconds(), f)
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
