/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The explorer drives the model (model_test.go) through every interleaving
// of events from start states in every phase of a rollout, and through
// long random walks, checking the invariants after every step. A
// violation prints the event sequence that reaches it (the shortest, for
// the breadth-first search).
//
// Events are progress (the controller's reconciles, the Flink operator
// acting, jobs coming up, savepoints completing, deletions finishing, the
// clock reaching the next deadline) or faults (crashes, lost writes, jobs
// crashing, failed savepoints, every commit and request of a user, denials,
// wiped status, a window closing). The search takes every progress event
// at every step and up to exploreFaults faults anywhere along the way, so
// each trail is a whole rollout with one or two faults inserted.

// exploreFaults is the number of faults the search inserts along a trail
// (EXPLORE_FAULTS overrides it); exploreDepth bounds a trail's length
// (EXPLORE_DEPTH).
func exploreFaults() int {
	if n, err := strconv.Atoi(os.Getenv("EXPLORE_FAULTS")); err == nil {
		return n
	}
	if testing.Short() {
		return 0
	}
	return 1
}

func exploreDepth() int {
	if n, err := strconv.Atoi(os.Getenv("EXPLORE_DEPTH")); err == nil {
		return n
	}
	return defaultExploreDepth
}

// The depths of TestExploreEveryInterleaving and TestExploreTheSystem
// when no environment variable overrides them.
const (
	defaultExploreDepth = 24
	defaultSystemDepth  = 16
)

func exploreSystemDepth() int {
	if n, err := strconv.Atoi(os.Getenv("EXPLORE_SYSTEM_DEPTH")); err == nil {
		return n
	}
	return defaultSystemDepth
}

// startStates are scripted states in every phase of a rollout.
type startState struct {
	name   string
	manual bool
	steps  []string
	// replicas: TestExploreTheSystem starts here too.
	replicas bool
}

var startStates = []startState{
	{"nothing deployed", false, nil, false},
	{"INITIALIZING_BLUE, suspended", false, []string{"commit: suspend", "reconcile"}, false},
	{"first deployment under way", false, []string{"reconcile"}, false},
	{"ACTIVE_BLUE", false, activeBlue, false},
	{"ACTIVE_BLUE, a new image committed", false, withCommit(activeBlue), false},
	{"ACTIVE_BLUE, an in-place change committed", false, append(clip(activeBlue), "commit: parallelism.default (in place)"), true},
	{"savepoint in flight", false, append(withCommit(activeBlue), "reconcile"), true},
	{"new colour deploying", false, toGreen, true},
	{"new colour ready", false, append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN"), true},
	{"deletion delay running", false, append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN", "reconcile"), true},
	{"new colour flapping", false, append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN", "reconcile",
		"job crashes: GREEN"), true},
	{"old colour being deleted", false, clip(activeGreen[:len(activeGreen)-1]), true},
	{"ACTIVE_GREEN, a new image committed", false, withCommit(activeGreen), false},
	{"Manual: ACTIVE_BLUE, a new image committed", true, withCommit(activeBlue), false},
	{"Manual: waiting for promotion", true, append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN", "reconcile"), true},
	{"ACTIVE_BLUE, deleted", false, append(clip(activeBlue), deleted), true},
	{"savepoint in flight, deleted", false, append(withCommit(activeBlue), "reconcile", deleted), false},
	{"new colour ready, deleted", false, append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN", deleted), false},
	{"ACTIVE_BLUE, gone", false, append(clip(activeBlue), deleted, "reconcile", "savepoint completes", "reconcile"), false},
}

const deleted = "deleted (a prune, kubectl delete)"

var (
	activeBlue  = []string{"reconcile", "operator acts on the spec of BLUE", "job becomes ready: BLUE", "reconcile"}
	toGreen     = append(withCommit(activeBlue), "reconcile", "savepoint completes", "reconcile")
	activeGreen = append(clip(toGreen), "operator acts on the spec of GREEN", "job becomes ready: GREEN",
		"reconcile", "clock past the next deadline", "reconcile", "deletion completes: BLUE")
)

func clip(s []string) []string { return s[:len(s):len(s)] }

func withCommit(s []string) []string { return append(clip(s), "commit: new image") }

// progressEvents are the names of the events that move a rollout on.
var progressEvents = map[string]bool{
	"reconcile": true, "savepoint completes": true, "clock past the next deadline": true,
	"operator acts on the spec of BLUE": true, "operator acts on the spec of GREEN": true,
	"job becomes ready: BLUE": true, "job becomes ready: GREEN": true,
	"job restarts from its checkpoint: BLUE": true, "job restarts from its checkpoint: GREEN": true,
	"deletion completes: BLUE": true, "deletion completes: GREEN": true,
	"the stalled replica's requests land": true,
	"re-created from Git":                 true,
}

func eventByName(name string) mEvent {
	for _, e := range concat(allEvents(), orphanEvents) {
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
	m      *model
	faults int // faults still to insert
	trail  []string
	at     graphPos // the last decision and what happened since (state_graph_test.go)
}

// reach counts what the search or the walks reached.
type reach struct {
	states, blueGreen, aborted, savepoints int
}

func (r *reach) note(m *model) {
	r.states++
	done, ab, sp := outcomes(m)
	r.blueGreen += b2i(done)
	r.aborted += b2i(ab)
	r.savepoints += b2i(sp)
}

// outcomes: has the model completed a blue/green rollout, aborted one,
// taken a savepoint?
func outcomes(m *model) (blueGreen, aborted, savepoint bool) {
	for _, r := range m.P.Status.History {
		blueGreen = blueGreen || r.Kind == v1alpha1.RolloutBlueGreen && r.Outcome == v1alpha1.RolloutSucceeded
		aborted = aborted || r.Outcome == v1alpha1.RolloutAborted
	}
	return blueGreen, aborted, len(m.Paths) > 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestExploreEveryInterleaving is the bounded exhaustive search: from each
// start state, every order of progress events with up to exploreFaults
// faults inserted anywhere, to exploreDepth events.
func TestExploreEveryInterleaving(t *testing.T) {
	everyInterleaving(exploreFaults()).run(t)
}

// everyInterleaving is the search of TestExploreEveryInterleaving.
func everyInterleaving(faults int) exploration {
	return exploration{"every interleaving", startStates, exploreDepth(), faults, oneProcessEvents()}
}

// TestExploreTheSystem is the same search with the faults of the system
// around one decider: a second replica (a decision taken from one status
// whose requests, its status write or only its actions once its status
// went first, land later anywhere along the trail: the landing is a
// progress event, the stall its fault) and API errors that last. They
// multiply the states, so it starts from the states of a rollout under
// way, to EXPLORE_SYSTEM_DEPTH (default 16).
func TestExploreTheSystem(t *testing.T) {
	theSystem(exploreFaults()).run(t)
}

// theSystem is the search of TestExploreTheSystem.
func theSystem(faults int) exploration {
	var starts []startState
	for _, s := range startStates {
		if s.replicas {
			starts = append(starts, s)
		}
	}
	return exploration{"the system", starts, exploreSystemDepth(), faults, allEvents()}
}

// exploration is one search: its start states, depth, faults and events.
type exploration struct {
	name          string
	starts        []startState
	depth, faults int
	events        []mEvent
}

func (x exploration) key() string {
	return fmt.Sprintf("%s, depth %d, %d faults", x.name, x.depth, x.faults)
}

// explored holds the state graph of each search that ran to its end
// without a violation in this process, by its key: the state graph test
// checks these rather than search again.
var explored = map[string]*stateGraph{}

// run runs the search, and keeps its state graph when it finds no
// violation.
func (x exploration) run(t *testing.T) *stateGraph {
	delete(explored, x.key())
	g := newStateGraph()
	exploreFrom(t, x.starts, x.depth, x.faults, x.events, g)
	if t.Failed() {
		return nil
	}
	explored[x.key()] = g
	return g
}

// oneProcessEvents are the events but the system's (systemEvents).
func oneProcessEvents() []mEvent {
	var out []mEvent
	for _, e := range allEvents() {
		if !systemEvents[e.name] {
			out = append(out, e)
		}
	}
	return out
}

func exploreFrom(t *testing.T, startStates []startState, depth, faults int, events []mEvent, g *stateGraph) {
	var all reach
	start := time.Now()
	// seen keeps, per state, the most faults a visit had left: a state
	// reached again with no more faults to spend has nothing new to show.
	// It is shared: a start state on another's path adds little.
	seen := map[uint64]int{}
	for _, s := range startStates {
		t.Run(s.name, func(t *testing.T) {
			m := newModel(v1alpha1.UpgradeModeSavepoint, s.manual)
			scripted(t, m, s.steps)
			r := explore(t, m, depth, faults, events, seen, g, scriptPos(s))
			all.states += r.states
			all.blueGreen += r.blueGreen
			t.Logf("%s (%s): %d states, %d of them after a completed blue/green rollout", s.name, m.describe(), r.states, r.blueGreen)
		})
	}
	t.Logf("%d states in all, up to %d faults a trail, depth %d, %d kinds of event (%d progress); %d states after a completed blue/green rollout; %s",
		all.states, faults, depth, len(events), len(progressEvents), all.blueGreen, time.Since(start).Round(time.Millisecond))
	if all.blueGreen == 0 {
		t.Errorf("the search completed no blue/green rollout: it cannot check a cut-over")
	}
}

func explore(t *testing.T, start *model, depth, faults int, events []mEvent, seen map[uint64]int, g *stateGraph, at graphPos) reach {
	frontier := []node{{m: start, faults: faults, at: at}}
	kinds := make([]eventKind, len(events))
	for i, e := range events {
		kinds[i] = kindOf(e.name)
	}
	var r reach
	if best, ok := seen[start.key()]; ok && best >= faults {
		return r
	}
	seen[start.key()] = faults
	r.note(start)
	for d := 0; d < depth && len(frontier) > 0; d++ {
		var next []node
		for _, n := range frontier {
			for i, e := range events {
				left := n.faults
				if !progressEvents[e.name] {
					if left == 0 {
						continue
					}
					left--
				}
				c := n.m.clone()
				c.wrote = nil
				ok, err := e.do(c)
				if !ok {
					continue
				}
				trail := append(clip(n.trail), e.name)
				if err != nil {
					t.Fatalf("violation: %v\nafter: %s\nstate: %s", err, strings.Join(trail, " → "), c.describe())
				}
				at := g.step(n.m, n.at, n.trail, c, e, kinds[i])
				k := c.key()
				if best, ok := seen[k]; ok && best >= left {
					continue
				}
				if _, ok := seen[k]; !ok {
					r.note(c)
				}
				seen[k] = left
				next = append(next, node{c, left, trail, at})
			}
		}
		frontier = next
	}
	return r
}

// TestRandomWalksWithFaults: long random walks through the same events,
// in every upgrade mode, with Automatic and Manual promotion. Progress is
// likelier than a fault and a new commit comes now and then, so that most
// walks complete blue/green rollouts, with faults on the way.
func TestRandomWalksWithFaults(t *testing.T) {
	walks, steps := 1000, 300
	if testing.Short() {
		walks = 300
	}
	if n, err := strconv.Atoi(os.Getenv("BG_WALKS")); err == nil {
		walks = n // a longer soak: BG_WALKS=100000
	}
	first := int64(0)
	if s := os.Getenv("BG_SEED"); s != "" {
		first, _ = strconv.ParseInt(s, 10, 64)
		walks = int(first) + 1
	}
	var progress, faults []mEvent
	for _, e := range allEvents() {
		if progressEvents[e.name] {
			progress = append(progress, e)
		} else {
			faults = append(faults, e)
		}
	}
	total, n := 0, walks-int(first)
	var r reach
	for seed := first; seed < int64(walks); seed++ {
		m, applied := walk(t, seed, steps, progress, faults)
		total += applied
		r.note(m)
	}
	t.Logf("%d walks, %d steps applied; %.0f%% completed a blue/green rollout, %.0f%% aborted one, %.0f%% took a savepoint",
		n, total, pct(r.blueGreen, n), pct(r.aborted, n), pct(r.savepoints, n))
	if n >= 100 && 2*r.blueGreen < n {
		t.Errorf("only %d of %d walks completed a blue/green rollout: the walks check too few cut-overs", r.blueGreen, n)
	}
}

func pct(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }

// walk takes steps events: a reconcile one time in three, a new image one
// time in fifty (and in Manual mode a promotion), a fault one time in fifty (six a walk), and
// otherwise a progress event that applies (a jump to the next deadline
// seldom: the operator usually keeps up).
func walk(t *testing.T, seed int64, steps int, progress, faults []mEvent) (*model, int) {
	r := rand.New(rand.NewSource(seed))
	mode, manual, noPath := modes[r.Intn(len(modes))], r.Intn(3) == 0, r.Intn(3) == 0
	m := newModel(mode, manual)
	if noPath {
		m.P.Spec.Template.Spec.Job.InitialSavepointPath = ""
		m.PathsSeen = map[string]bool{"": true}
	}
	commit, promote := eventByName("commit: new image"), eventByName("request "+v1alpha1.PromoteRequestedAtAnnotation)
	var trail []string
	for i := 0; i < steps; i++ {
		var pick []mEvent
		switch p := r.Intn(100); {
		case p < 33:
			pick = controllerEvents[:1]
		case p < 35:
			pick = []mEvent{commit}
		case p < 37:
			if manual {
				pick = []mEvent{promote} // a person promotes, now and then
			}
		case p < 39:
			pick = faults
		default:
			pick = progress
			if r.Intn(12) != 0 {
				pick = withoutClock(progress)
			}
		}
		name, err := applyOne(r, m, pick)
		if name == "" {
			continue
		}
		trail = append(trail, name)
		if err != nil {
			trail = shortest(mode, manual, noPath, trail)
			m, err = replay(mode, manual, noPath, trail)
			t.Fatalf("violation (seed %d, %s, promotion %s, no initialSavepointPath %v): %v\nafter: %s\nstate: %s", seed, mode,
				m.P.PromotionMode(), noPath, err, strings.Join(trail, " → "), m.describe())
		}
	}
	return m, len(trail)
}

// applyOne applies the first of events, in random order, that applies;
// "" when none does.
func applyOne(r *rand.Rand, m *model, events []mEvent) (string, error) {
	for _, i := range r.Perm(len(events)) {
		if ok, err := events[i].do(m); ok {
			return events[i].name, err
		}
	}
	return "", nil
}

func withoutClock(events []mEvent) []mEvent {
	var out []mEvent
	for _, e := range events {
		if e.name != "clock past the next deadline" {
			out = append(out, e)
		}
	}
	return out
}

// replay runs a trail of events on a new model; the error is the
// violation it ends in.
func replay(mode string, manual, noPath bool, trail []string) (*model, error) {
	m := newModel(mode, manual)
	if noPath {
		m.P.Spec.Template.Spec.Job.InitialSavepointPath = ""
		m.PathsSeen = map[string]bool{"": true}
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
