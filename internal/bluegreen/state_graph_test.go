/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The state graph: every change of status.blueGreenState the explorer
// reaches, as (from, to, event, reason) rows, kept in a golden table
// (testdata/state-graph.tsv) and drawn from it in
// docs/spec/v1alpha1/state-graph.md. A new edge is a change of behaviour
// to review; -update writes both files again:
//
//	go test ./internal/bluegreen -run TestStateGraph -update
//
// The states are the values of blueGreenState, (unset) and (gone). An
// edge is recorded at each status write (a decision that moves the state,
// or keeps it and says why in an event) and at each event that moves it
// without a decision (a wiped status, a re-creation). Its reason is what
// the decision says: the reasons of its events, else its Reconciling (or
// Ready) condition's. Its event is what made the decision move the state:
// of the events applied since the decision before, each that alone, after
// that decision, leads the same decision to the same moves; when none
// does alone, the last of them; and "reconcile" when the moves come
// without any (the controller going on by itself after a write of its
// own; "controller crash" or "second replica" after a reconcile that did
// not finish, or another replica's). Asking rather than taking every event
// since keeps out the faults the search inserts anywhere: a commit just
// before a cut-over does not label the cut-over.
//
// Which path the search takes to a state first decides what happened
// "since the decision before" there, so a search with other settings may
// label an edge otherwise. The golden is therefore the union of the full
// searches and those of -short, and -short checks its own edges against
// it; other settings (EXPLORE_*) are not checked.

var update = flag.Bool("update", false, "rewrite testdata/state-graph.tsv and docs/spec/v1alpha1/state-graph.md from the explorer")

const (
	stateGraphGolden = "testdata/state-graph.tsv"
	updateStateGraph = "go test ./internal/bluegreen -run TestStateGraph -update"
	// Pseudo-states: no blueGreenState yet (a new object, a wiped
	// status), and the object gone (its finalizer removed).
	stateUnset = "(unset)"
	stateGone  = "(gone)"
)

var stateGraphDoc = filepath.Join("..", "..", "docs", "spec", "v1alpha1", "state-graph.md")

// eventKind is what the state graph calls an event of the model; role
// says how it stands to the decisions.
type eventKind struct {
	name string
	role kindRole
}

type kindRole int

const (
	worldEvent kindRole = iota // something happens that a later decision answers
	decision                   // a reconcile: the controller decides on what happened
	crashed                    // a reconcile that does not finish; the next one goes on
	stalled                    // a second replica decides; its requests land later
	landed                     // a stalled replica's requests land: its decision, late
)

// eventKinds name the events of model_events_test.go and
// model_lifecycle_test.go by prefix, the longer first where they share one.
var eventKinds = []eventKind{
	{"reconcile, ", crashed},
	{"reconcile", decision},
	{"a replica ", stalled},
	{"the stalled replica's requests land", landed},
	{"API errors", worldEvent},
	{"operator acts", worldEvent},
	{"job becomes ready", worldEvent},
	{"job crashes", worldEvent},
	{"job restarts", worldEvent},
	{"deletion completes", worldEvent},
	{"savepoint completes", worldEvent},
	{"savepoint fails", worldEvent},
	{"clock", worldEvent},
	{"commit", worldEvent},
	{"request " + v1alpha1.PromoteRequestedAtAnnotation, worldEvent},
	{"request " + v1alpha1.AbortRequestedAtAnnotation, worldEvent},
	{"request " + v1alpha1.RetryRequestedAtAnnotation, worldEvent},
	{"status wiped", worldEvent},
	{"rollout window", worldEvent},
	{"webhook denies", worldEvent},
	{"RBAC forbids", worldEvent},
	{"deleted by hand", worldEvent},
	{"scaled", worldEvent},
	{"deleted", worldEvent},
	{"re-created", worldEvent},
}

// kindLabels are the edge labels of the kinds whose prefix does not
// read as one.
var kindLabels = map[string]string{
	"reconcile, ":                         "controller crash",
	"a replica ":                          "second replica",
	"the stalled replica's requests land": "second replica",
	"operator acts":                       "operator",
	"job becomes ready":                   "job ready",
	"job crashes":                         "job crash",
	"job restarts":                        "job restart",
	"deletion completes":                  "child deletion completes",
	"request " + v1alpha1.PromoteRequestedAtAnnotation: "promote",
	"request " + v1alpha1.AbortRequestedAtAnnotation:   "abort",
	"request " + v1alpha1.RetryRequestedAtAnnotation:   "retry",
	"rollout window":  "window",
	"webhook denies":  "denial",
	"RBAC forbids":    "denial",
	"deleted by hand": "child deleted by hand",
	"scaled":          "child scaled",
	"deleted":         "deletion",
	"re-created":      "re-creation",
}

// kindOf is the kind of the named event, its name the edge label.
func kindOf(event string) eventKind {
	for _, k := range eventKinds {
		if strings.HasPrefix(event, k.name) {
			if l, ok := kindLabels[k.name]; ok {
				k.name = l
			}
			return k
		}
	}
	panic("the state graph has no kind for the event " + event)
}

// decides: the event is a decision on the state (a status write may follow).
func (k eventKind) decides() bool {
	return k.role == decision || k.role == crashed || k.role == stalled
}

// by is the label of the moves a decision after this one makes with
// nothing happening in between.
func (k eventKind) by() string {
	if k.role == decision {
		return "reconcile"
	}
	return k.name
}

var modelEvents = sync.OnceValue(func() map[string]mEvent {
	out := map[string]mEvent{}
	for _, e := range concat(allEvents(), orphanEvents) {
		out[e.name] = e
	}
	return out
})

// graphPos is where a trail stands: the model as its last decision left
// it, and the events applied since: those of the start state's script,
// then those of the trail from index from on.
type graphPos struct {
	base   *decisionBase
	script []string
	from   int
}

func (at graphPos) sinceLen(trail []string) int { return len(at.script) + len(trail) - at.from }

func (at graphPos) since(trail []string) []string {
	return append(clip(at.script), trail[at.from:]...)
}

// decisionBase is a model as a decision left it; outcomes keeps the moves
// a decision makes from it after one event or none (the search makes
// most of these steps itself: step keeps them as it goes).
type decisionBase struct {
	m        *model
	by       string
	outcomes []decisionOutcome
}

type decisionOutcome struct{ decision, after, moves string }

func (b *decisionBase) known(decision, after string) (string, bool) {
	for _, o := range b.outcomes {
		if o.decision == decision && o.after == after {
			return o.moves, true
		}
	}
	return "", false
}

// scriptPos is the graphPos at the end of a start state's script.
func scriptPos(s startState) graphPos {
	last := -1
	for i, name := range s.steps {
		if kindOf(name).decides() {
			last = i
		}
	}
	m := newModel(v1alpha1.UpgradeModeSavepoint, s.manual)
	for _, name := range s.steps[:last+1] {
		_, _ = modelEvents()[name].do(m) // scripted has run them without a violation
	}
	m.wrote = nil
	by := "reconcile"
	if last >= 0 {
		by = kindOf(s.steps[last]).by()
	}
	return graphPos{&decisionBase{m: m, by: by}, clip(s.steps[last+1:]), 0}
}

// outcome is the moves e makes from b after the event named name ("":
// none), "" when they are none, or either does not apply or ends in a
// violation.
func (b *decisionBase) outcome(e mEvent, name string) string {
	if s, ok := b.known(e.name, name); ok {
		return s
	}
	x, s := b.m.clone(), ""
	ok, err := true, error(nil)
	if name != "" {
		ok, err = modelEvents()[name].do(x)
	}
	if ok && err == nil {
		from := stateOf(x)
		x.wrote = nil
		if ok, err = e.do(x); ok && err == nil {
			s = movesKey(movesOf(from, x))
		}
	}
	b.outcomes = append(b.outcomes, decisionOutcome{e.name, name, s})
	return s
}

type graphEdge struct{ from, to, event, reason string }

func (e graphEdge) String() string { return e.from + "\t" + e.to + "\t" + e.event + "\t" + e.reason }

type stateGraph struct{ edges map[graphEdge]bool }

func newStateGraph() *stateGraph { return &stateGraph{edges: map[graphEdge]bool{}} }

func (g *stateGraph) merge(o *stateGraph) {
	for e := range o.edges {
		g.edges[e] = true
	}
}

// step records the edges of event e (of kind k), applied to before (at
// graphPos at, reached by trail) and giving after; it returns the
// graphPos of after.
func (g *stateGraph) step(before *model, at graphPos, trail []string, after *model, e mEvent, k eventKind) graphPos {
	moves := movesOf(stateOf(before), after)
	if n := at.sinceLen(trail); k.decides() && n <= 1 {
		// A decision right after the last one, or after one event: an
		// outcome a later step may ask for.
		prior := ""
		if n == 1 {
			prior = at.since(trail)[0]
		}
		if _, ok := at.base.known(e.name, prior); !ok {
			at.base.outcomes = append(at.base.outcomes, decisionOutcome{e.name, prior, movesKey(moves)})
		}
	}
	if len(moves) > 0 {
		for _, label := range at.labels(at.since(trail), moves, e, k) {
			for _, mv := range moves {
				g.edges[graphEdge{mv.from, mv.to, label, mv.reason}] = true
			}
		}
	}
	after.wrote = nil
	if k.decides() {
		return graphPos{base: &decisionBase{m: after, by: k.by()}, from: len(trail) + 1}
	}
	return at
}

// labels are the events that moves, made by e after the events since,
// answer (see the top).
func (at graphPos) labels(since []string, moves []stateMove, e mEvent, k eventKind) []string {
	if !k.decides() {
		return []string{k.name}
	}
	if len(since) == 0 {
		return []string{at.base.by}
	}
	want := movesKey(moves)
	if at.base.outcome(e, "") == want {
		return []string{at.base.by}
	}
	var out []string
	for i, name := range since {
		if !slices.Contains(since[:i], name) && at.base.outcome(e, name) == want && !slices.Contains(out, kindOf(name).name) {
			out = append(out, kindOf(name).name)
		}
	}
	if len(out) == 0 {
		out = append(out, kindOf(since[len(since)-1]).name)
	}
	return out
}

// stateMove is one change of state: a status write, or one without a decision.
type stateMove struct{ from, to, reason string }

// movesOf are the moves of the event that gave after from state from:
// its status writes (that change the state or say why they keep it), and
// the object gone, wiped or re-created.
func movesOf(from string, after *model) []stateMove {
	var out []stateMove
	at := from
	var last *Decision
	for i, w := range after.wrote {
		f, to := stateName(w.From), stateName(w.D.Status.BlueGreenState)
		if f != to || len(w.D.Events) > 0 {
			out = append(out, stateMove{f, to, decisionReason(w.D)})
		}
		at, last = to, &after.wrote[i].D
	}
	if end := stateOf(after); end != at {
		reason := "-"
		switch {
		case end != stateGone:
		case last != nil && last.Finalize:
			reason = "Finalized"
		default:
			reason = "DeletionOverdue" // the adapter lets a deletion past its deadline complete
		}
		out = append(out, stateMove{at, end, reason})
	}
	return out
}

func movesKey(moves []stateMove) string {
	var b strings.Builder
	for _, m := range moves {
		b.WriteString(m.from + "\x00" + m.to + "\x00" + m.reason + "\x00")
	}
	return b.String()
}

func stateOf(m *model) string {
	if m.Gone {
		return stateGone
	}
	return stateName(m.P.Status.BlueGreenState)
}

func stateName(s v1alpha1.BlueGreenState) string {
	if s == "" {
		return stateUnset
	}
	return string(s)
}

// ackReasons are the events of requests acknowledged and ignored: beside
// others they say nothing of the move.
var ackReasons = []string{"PromoteIgnored", "AbortIgnored", "RetryIgnored"}

// decisionReason is why a decision says it wrote the status: the reasons
// of its events, else the reason of its Reconciling condition, else of
// its Ready condition.
func decisionReason(d Decision) string {
	var rs, acks []string
	for _, e := range d.Events {
		switch {
		case slices.Contains(ackReasons, e.Reason):
			acks = append(acks, e.Reason)
		case !slices.Contains(rs, e.Reason):
			rs = append(rs, e.Reason)
		}
	}
	if len(rs) == 0 {
		rs = slices.Compact(slices.Sorted(slices.Values(acks)))
	}
	if len(rs) > 0 {
		sort.Strings(rs)
		return strings.Join(rs, "+")
	}
	for _, typ := range []string{v1alpha1.ReconcilingCondition, v1alpha1.ReadyCondition} {
		if c := findCondition(d.Status.Conditions, typ); c != nil {
			return typ + ":" + c.Reason
		}
	}
	return "-"
}

// rows are the edges as the golden table's lines, sorted.
func (g *stateGraph) rows() []string {
	out := make([]string, 0, len(g.edges))
	for e := range g.edges {
		out = append(out, e.String())
	}
	sort.Strings(out)
	return out
}

const stateGraphHeader = "# The changes of status.blueGreenState that the explorer reaches (explore_test.go), one per\n" +
	"# (from, to, event, reason); see state_graph_test.go. Do not edit: regenerate with\n" +
	"#\t" + updateStateGraph + "\n" +
	"from\tto\tevent\treason\n"

func renderStateGraphGolden(rows []string) string {
	return stateGraphHeader + strings.Join(rows, "\n") + "\n"
}

// parseStateGraphGolden returns the rows of the golden table.
func parseStateGraphGolden(s string) []graphEdge {
	var out []graphEdge
	for _, line := range strings.Split(s, "\n") {
		if line == "" || strings.HasPrefix(line, "#") || line == "from\tto\tevent\treason" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			out = append(out, graphEdge{from: line}) // a malformed row: it matches no edge
			continue
		}
		out = append(out, graphEdge{f[0], f[1], f[2], f[3]})
	}
	return out
}

// stateGraphSearches are the searches whose edges the golden holds, and
// whether this run is the one that writes it: with the explorer's
// defaults, the full searches (and those of -short, whose edges are then
// checked to be among them, whatever path reached each state first);
// under -short, the searches of -short alone. Other settings (EXPLORE_*)
// are not checked.
func stateGraphSearches() (searches []exploration, full bool, ok bool) {
	if exploreDepth() != defaultExploreDepth || exploreSystemDepth() != defaultSystemDepth {
		return nil, false, false
	}
	short := []exploration{everyInterleaving(0), theSystem(0)}
	switch {
	case testing.Short() && exploreFaults() == 0:
		return short, false, true
	case !testing.Short() && exploreFaults() == 1:
		return append([]exploration{everyInterleaving(1), theSystem(1)}, short...), true, true
	}
	return nil, false, false
}

// TestStateGraphMatchesTheGolden: the explorer reaches the edges of
// testdata/state-graph.tsv, no other (under -short, a part of them). It
// takes the graphs of TestExploreEveryInterleaving and
// TestExploreTheSystem when they ran before it in this process, and
// otherwise runs their searches.
func TestStateGraphMatchesTheGolden(t *testing.T) {
	searches, full, ok := stateGraphSearches()
	if !ok {
		t.Skip("EXPLORE_DEPTH, EXPLORE_SYSTEM_DEPTH or EXPLORE_FAULTS changes the searches: the golden holds the edges of the defaults")
	}
	reached := newStateGraph()
	for _, x := range searches {
		g := explored[x.key()]
		if g == nil {
			t.Run(x.key(), func(t *testing.T) { g = x.run(t) })
		}
		if g == nil {
			t.Fatalf("the search %s failed: no state graph to compare", x.key())
		}
		reached.merge(g)
	}
	states := map[string]bool{}
	for e := range reached.edges {
		states[e.from], states[e.to] = true, true
	}
	t.Logf("%d edges between %d states", len(reached.edges), len(states))
	if *update {
		if !full {
			t.Fatalf("the golden holds the edges of the full searches: run without -short to write it (%s)", updateStateGraph)
		}
		if err := os.MkdirAll(filepath.Dir(stateGraphGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stateGraphGolden, []byte(renderStateGraphGolden(reached.rows())), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", stateGraphGolden)
		return
	}
	b, err := os.ReadFile(stateGraphGolden)
	if err != nil {
		t.Fatalf("%v: write it with %s", err, updateStateGraph)
	}
	golden := map[graphEdge]bool{}
	for _, e := range parseStateGraphGolden(string(b)) {
		golden[e] = true
	}
	var added, gone []string
	for e := range reached.edges {
		if !golden[e] {
			added = append(added, e.String())
		}
	}
	for e := range golden {
		if full && !reached.edges[e] {
			gone = append(gone, e.String())
		}
	}
	sort.Strings(added)
	sort.Strings(gone)
	if len(added) > 0 {
		t.Errorf("the explorer reaches %d edges of the state graph that %s does not list (from, to, event, reason):\n\t%s",
			len(added), stateGraphGolden, strings.Join(added, "\n\t"))
	}
	if len(gone) > 0 {
		t.Errorf("%s lists %d edges the explorer no longer reaches:\n\t%s", stateGraphGolden, len(gone), strings.Join(gone, "\n\t"))
	}
	if t.Failed() {
		t.Logf("if the change of the state machine is intended, regenerate the golden and the diagram: %s", updateStateGraph)
	}
}

// TestStateGraphDocIsCurrent: docs/spec/v1alpha1/state-graph.md is the
// diagram of testdata/state-graph.tsv.
func TestStateGraphDocIsCurrent(t *testing.T) {
	b, err := os.ReadFile(stateGraphGolden)
	if err != nil {
		t.Fatalf("%v: write it with %s", err, updateStateGraph)
	}
	want := renderStateGraphDoc(parseStateGraphGolden(string(b)))
	if *update {
		if err := os.WriteFile(stateGraphDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", stateGraphDoc)
		return
	}
	got, err := os.ReadFile(stateGraphDoc)
	if err != nil {
		t.Fatalf("%v: write it with %s", err, updateStateGraph)
	}
	if string(got) != want {
		t.Errorf("docs/spec/v1alpha1/state-graph.md is not the diagram of %s: regenerate it with %s", stateGraphGolden, updateStateGraph)
	}
}

// mermaidIDs name the pseudo-states in the diagram.
var mermaidIDs = map[string]string{stateUnset: "UNSET", stateGone: "GONE"}

func mermaidID(state string) string {
	if id, ok := mermaidIDs[state]; ok {
		return id
	}
	return state
}

// renderStateGraphDoc draws the golden table: one arrow per (from, to)
// labelled with its events, then the table with the reasons.
func renderStateGraphDoc(edges []graphEdge) string {
	type pair struct{ from, to string }
	events := map[pair][]string{}
	var pairs []pair
	for _, e := range edges {
		p := pair{e.from, e.to}
		if _, ok := events[p]; !ok {
			pairs = append(pairs, p)
		}
		if !slices.Contains(events[p], e.event) {
			events[p] = append(events[p], e.event)
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].from != pairs[j].from {
			return pairs[i].from < pairs[j].from
		}
		return pairs[i].to < pairs[j].to
	})
	var b strings.Builder
	b.WriteString("# FlinkBlueGreenDeployment state graph\n\n")
	fmt.Fprintf(&b, "Generated from [internal/bluegreen/%s](../../../internal/bluegreen/%s) by the state machine "+
		"explorer's test, `TestStateGraphMatchesTheGolden` in `internal/bluegreen/state_graph_test.go` "+
		"(`TestStateGraphDocIsCurrent` fails when this file is stale); do not edit it by hand. When the state machine "+
		"changes, regenerate the table and this file with `%s` (it runs the explorer's full search, a few minutes). "+
		"Each arrow is a change of `status.blueGreenState` that the explorer reaches (every order of the events of "+
		"a rollout, with a fault inserted anywhere), or a decision that keeps the state and says why in an event. "+
		"It is labelled with the kinds of event that made the controller's decision: a commit, the Flink operator "+
		"acting on a spec, a job becoming ready or crashing, a savepoint completing or failing, the clock passing a "+
		"deadline, a person's promote, abort or retry, a deletion, a fault of the system (a controller crash, a "+
		"second replica, a denial); `reconcile` where the controller went on by itself. `%s` is a status with no "+
		"state yet (a new object, or a wiped status); `%s` is the object gone, its finalizer removed. The table "+
		"after the diagram gives each edge's reason: the reasons of the decision's events, else its condition's.\n\n",
		stateGraphGolden, stateGraphGolden, updateStateGraph, stateUnset, stateGone)
	b.WriteString("```mermaid\nstateDiagram-v2\n")
	for _, s := range []string{stateUnset, stateGone} {
		fmt.Fprintf(&b, "    state \"%s\" as %s\n", s, mermaidID(s))
	}
	for _, p := range pairs {
		evs := slices.Clone(events[p])
		sort.Strings(evs)
		fmt.Fprintf(&b, "    %s --> %s : %s\n", mermaidID(p.from), mermaidID(p.to), strings.Join(evs, ", "))
	}
	b.WriteString("```\n\n")
	b.WriteString("## Edges\n\n| From | To | Event | Reason |\n|---|---|---|---|\n")
	rows := slices.Clone(edges)
	sort.Slice(rows, func(i, j int) bool { return rows[i].String() < rows[j].String() })
	for _, e := range rows {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", e.from, e.to, e.event, e.reason)
	}
	return b.String()
}
