/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// faults.go: Fault, the kinds of fault with their odds and hold times, and
// newFaults, which draws the faults of a run.

package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Fault is one scheduled fault.
type Fault struct {
	// At is when it is due, from the start of the fault phase.
	At   time.Duration
	Kind string
	// Role picks the controller replica: the leader or the follower.
	Role string
	// Signal ends a process: KILL or TERM.
	Signal string
	// Hold is how long the component stays down, paused or slow.
	Hold time.Duration
	// Latency is what a slow link adds to every read.
	Latency time.Duration
	// Pick chooses among what is there when the fault runs (children,
	// snapshots, deployments): Pick modulo their number, sorted by name.
	Pick uint32
}

// Kinds of fault.
const (
	faultKillController  = "kill-controller"
	faultKillMidRollout  = "kill-leader-mid-rollout"
	faultPauseController = "pause-controller"
	faultRestartAPI      = "restart-apiserver"
	faultRestartEtcd     = "restart-etcd"
	faultStopGitea       = "stop-gitea"
	faultSlowGitea       = "slow-gitea"
	faultStopGitServer   = "stop-git-server"
	faultSlowGitServer   = "slow-git-server"
	faultDeleteChild     = "delete-child"
	faultDeleteSnapshot  = "delete-snapshot"
	faultWipeStatus      = "wipe-status"
	faultHoldAPI         = "hold-api-requests"
	faultAPIErrors       = "api-errors"
)

// faultKinds are the relative odds of each fault and how long it holds
// (at Pace.Hold 1).
var faultKinds = []struct {
	kind   string
	weight int
	hold   span
}{
	{faultKillController, 30, span{}},
	{faultKillMidRollout, 20, span{}},
	{faultPauseController, 30, span{5 * time.Second, 30 * time.Second}},
	{faultRestartAPI, 20, span{time.Second, 8 * time.Second}},
	{faultRestartEtcd, 15, span{time.Second, 8 * time.Second}},
	{faultStopGitea, 15, span{10 * time.Second, 45 * time.Second}},
	{faultSlowGitea, 10, span{20 * time.Second, 60 * time.Second}},
	{faultStopGitServer, 10, span{10 * time.Second, 45 * time.Second}},
	{faultSlowGitServer, 8, span{20 * time.Second, 60 * time.Second}},
	{faultDeleteChild, 15, span{}},
	{faultDeleteSnapshot, 10, span{}},
	{faultWipeStatus, 10, span{}},
	// One replica's requests to the API server held past the lease (15 s)
	// and delivered late.
	{faultHoldAPI, 25, span{5 * time.Second, 40 * time.Second}},
	// Every write of a FlinkDeployment or FlinkStateSnapshot fails with
	// 500 (an admission webhook that is down), longer than the timers.
	{faultAPIErrors, 15, span{30 * time.Second, 100 * time.Second}},
}

// FaultKinds lists every kind of fault, in the order of the report.
func FaultKinds() []string {
	out := make([]string, len(faultKinds))
	for i, k := range faultKinds {
		out[i] = k.kind
	}
	return out
}

// newFaults draws the faults of a run of length d: one at a time, each
// due a gap after the previous one ended.
func newFaults(rnd *rand.Rand, d time.Duration, pace Pace) []*Fault {
	var out []*Fault
	for at := draw(rnd, pace.FaultGap); at < d; {
		f := drawFault(rnd, pace)
		f.At = at
		out = append(out, f)
		at += f.Hold + draw(rnd, pace.FaultGap)
	}
	return out
}

func drawFault(rnd *rand.Rand, pace Pace) *Fault {
	total := 0
	for _, k := range faultKinds {
		total += k.weight
	}
	x := rnd.IntN(total)
	i := 0
	for ; x >= faultKinds[i].weight; i++ {
		x -= faultKinds[i].weight
	}
	k := faultKinds[i]
	f := &Fault{Kind: k.kind, Role: "leader", Signal: "KILL", Pick: rnd.Uint32()}
	if k.hold.Max > 0 {
		f.Hold = time.Duration(float64(draw(rnd, k.hold)) * pace.Hold).Round(100 * time.Millisecond)
	}
	if rnd.IntN(3) == 0 {
		f.Role = "follower"
	}
	if rnd.IntN(2) == 0 && k.kind == faultRestartAPI {
		f.Signal = "TERM"
	}
	if k.kind == faultSlowGitea || k.kind == faultSlowGitServer {
		f.Latency = draw(rnd, span{500 * time.Millisecond, 3 * time.Second}).Round(100 * time.Millisecond)
	}
	return f
}

func draw(rnd *rand.Rand, s span) time.Duration {
	return s.Min + time.Duration(rnd.Int64N(int64(s.Max-s.Min)+1))
}

func (f *Fault) String() string {
	s := f.Kind
	switch f.Kind {
	case faultKillController, faultPauseController, faultHoldAPI:
		s += " " + f.Role
	case faultRestartAPI:
		s += " SIG" + f.Signal
	}
	if f.Hold > 0 {
		s += fmt.Sprintf(" for %s", f.Hold)
	}
	if f.Latency > 0 {
		s += fmt.Sprintf(" (+%s per read)", f.Latency)
	}
	if f.Kind == faultDeleteChild || f.Kind == faultDeleteSnapshot || f.Kind == faultWipeStatus {
		s += fmt.Sprintf(" pick %d", f.Pick)
	}
	return s
}
