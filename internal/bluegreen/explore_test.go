/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The explorer drives the model (model_test.go) through every interleaving
// of events up to a depth from each of the seven states, and through long
// random walks, checking the invariants after every step. A violation
// prints the event sequence that reaches it (the shortest, for the
// breadth-first search).

// exploreDepth is the depth of the exhaustive search from each state
// (EXPLORE_DEPTH overrides it); see TestExploreEveryInterleaving.
func exploreDepth() int {
	if n, err := strconv.Atoi(os.Getenv("EXPLORE_DEPTH")); err == nil {
		return n
	}
	if testing.Short() {
		return 3
	}
	return 4
}

// startStates are the seven blue/green states, reached by a script.
var startStates = []struct {
	state v1alpha1.BlueGreenState
	steps []string
}{
	{v1alpha1.InitializingBlue, []string{"commit: suspend", "reconcile"}},
	{v1alpha1.TransitioningToBlue, []string{"reconcile"}},
	{v1alpha1.ActiveBlue, activeBlue},
	{v1alpha1.SavepointingBlue, append(activeBlue[:len(activeBlue):len(activeBlue)], "commit: new image", "reconcile")},
	{v1alpha1.TransitioningToGreen, toGreen},
	{v1alpha1.ActiveGreen, activeGreen},
	{v1alpha1.SavepointingGreen, append(activeGreen[:len(activeGreen):len(activeGreen)], "commit: new image", "reconcile")},
}

var (
	activeBlue  = []string{"reconcile", "operator acts on the spec of BLUE", "job becomes ready: BLUE", "reconcile"}
	toGreen     = append(activeBlue[:len(activeBlue):len(activeBlue)], "commit: new image", "reconcile", "savepoint completes", "reconcile")
	activeGreen = append(toGreen[:len(toGreen):len(toGreen)], "operator acts on the spec of GREEN", "job becomes ready: GREEN",
		"reconcile", "clock past the next deadline", "reconcile", "deletion completes: BLUE")
)

func eventByName(name string) mEvent {
	for _, e := range allEvents() {
		if e.name == name {
			return e
		}
	}
	panic("no event " + name)
}

// scripted runs named events, each of which must apply without violation.
func scripted(t testing.TB, m *model, steps []string) {
	t.Helper()
	for i, s := range steps {
		ok, err := eventByName(s).do(m)
		if !ok || err != nil {
			t.Fatalf("script step %d %q: applied=%v err=%v\n%s", i, s, ok, err, m.describe())
		}
	}
}

type node struct {
	m     *model
	trail []string
}

// TestExploreEveryInterleaving is the bounded exhaustive search.
func TestExploreEveryInterleaving(t *testing.T) {
	depth := exploreDepth()
	events := allEvents()
	total := 0
	for _, s := range startStates {
		t.Run(string(s.state), func(t *testing.T) {
			m := newModel(v1alpha1.UpgradeModeSavepoint, false)
			scripted(t, m, s.steps)
			if m.P.Status.BlueGreenState != s.state {
				t.Fatalf("script reached %s, want %s", m.describe(), s.state)
			}
			n := explore(t, m, depth, events)
			total += n
			t.Logf("%s: %d states explored to depth %d", s.state, n, depth)
		})
	}
	t.Logf("%d states in all, depth %d, %d kinds of event", total, depth, len(events))
}

func explore(t *testing.T, start *model, depth int, events []mEvent) int {
	frontier := []node{{m: start}}
	seen := map[uint64]bool{start.key(): true}
	for d := 0; d < depth; d++ {
		var next []node
		for _, n := range frontier {
			for _, e := range events {
				c := n.m.clone()
				ok, err := e.do(c)
				if !ok {
					continue
				}
				trail := append(n.trail[:len(n.trail):len(n.trail)], e.name)
				if err != nil {
					t.Fatalf("violation: %v\nafter: %s\nstate: %s", err, strings.Join(trail, " → "), c.describe())
				}
				if k := c.key(); !seen[k] {
					seen[k] = true
					if d+1 < depth {
						next = append(next, node{c, trail})
					}
				}
			}
		}
		frontier = next
	}
	return len(seen)
}

// TestRandomWalksWithFaults: long random walks through the same events,
// in every upgrade mode, with Automatic and Manual promotion.
func TestRandomWalksWithFaults(t *testing.T) {
	walks, steps := 1500, 80
	if testing.Short() {
		walks = 200
	}
	if n, err := strconv.Atoi(os.Getenv("BG_WALKS")); err == nil {
		walks = n // a longer soak: BG_WALKS=100000
	}
	first := int64(0)
	if s := os.Getenv("BG_SEED"); s != "" {
		first, _ = strconv.ParseInt(s, 10, 64)
		walks = int(first) + 1
	}
	events := allEvents()
	total := 0
	for seed := first; seed < int64(walks); seed++ {
		total += walk(t, seed, steps, events)
	}
	t.Logf("%d walks, %d steps applied", walks-int(first), total)
}

func walk(t *testing.T, seed int64, steps int, events []mEvent) int {
	r := rand.New(rand.NewSource(seed))
	mode, manual, noPath := modes[r.Intn(len(modes))], r.Intn(3) == 0, r.Intn(3) == 0
	m := newModel(mode, manual)
	if noPath {
		m.P.Spec.Template.Spec.Job.InitialSavepointPath = ""
	}
	var trail []string
	for i := 0; i < steps; i++ {
		e := events[r.Intn(len(events))]
		if r.Intn(3) == 0 {
			e = controllerEvents[0] // reconciles are the most common event
		}
		ok, err := e.do(m)
		if !ok {
			continue
		}
		trail = append(trail, e.name)
		if err != nil {
			trail = shortest(mode, manual, noPath, trail)
			m, err = replay(mode, manual, noPath, trail)
			t.Fatalf("violation (seed %d, %s, promotion %s, no initialSavepointPath %v): %v\nafter: %s\nstate: %s", seed, mode,
				m.P.PromotionMode(), noPath, err, strings.Join(trail, " → "), m.describe())
		}
	}
	return len(trail)
}

// replay runs a trail of events on a new model; the error is the
// violation it ends in.
func replay(mode string, manual, noPath bool, trail []string) (*model, error) {
	m := newModel(mode, manual)
	if noPath {
		m.P.Spec.Template.Spec.Job.InitialSavepointPath = ""
	}
	for _, name := range trail {
		if ok, err := eventByName(name).do(m); ok && err != nil {
			return m, err
		}
	}
	return m, nil
}

// shortest removes events from a failing trail while it still fails.
func shortest(mode string, manual, noPath bool, trail []string) []string {
	for i := len(trail) - 1; i >= 0; i-- {
		cand := append(trail[:i:i], trail[i+1:]...)
		if _, err := replay(mode, manual, noPath, cand); err != nil {
			trail = cand
		}
	}
	return trail
}
