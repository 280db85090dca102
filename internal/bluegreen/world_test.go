/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// world is a tiny simulation of the API server, the Flink operator and the
// adapter: it feeds Decide, checks the invariants on every decision, and
// applies the actions the way the adapter would.
type world struct {
	t                 testing.TB
	parent            *v1alpha1.FlinkBlueGreenDeployment
	children          map[Color]*Child
	snaps             map[string]*simSnap
	now               time.Time
	window            Window
	lineage           map[string]int  // child name → job incarnation
	jobSeq            int             // for job ids
	byHand            map[string]bool // children deleted outside the controller
	dropNext          bool            // simulate a crash between actions and status write
	record            *Record         // the state record of the parent's name, if any
	finalized         bool            // a decision asked to remove the finalizer
	restoreSourceLive bool            // the object restore-from names exists
	snapshotsIgnored  bool            // the operator's snapshot controller is off: snapshots get no status
	last              Decision
	history           []string // decisions, for failure messages
}

type simSnap struct {
	Snapshot
	job     string
	lineage int
}

var t0 = time.Date(2026, 7, 20, 12, 0, 0, 0, time.UTC)

func baseSpec(mode string) v1alpha1.FlinkBlueGreenDeploymentSpec {
	return v1alpha1.FlinkBlueGreenDeploymentSpec{
		Configuration: map[string]string{
			v1alpha1.AbortGracePeriodKey:        "10 min",
			v1alpha1.RescheduleIntervalKey:      "15 s",
			v1alpha1.DeploymentDeletionDelayKey: "0",
		},
		Template: v1alpha1.FlinkDeploymentTemplate{Spec: v1alpha1.FlinkDeploymentSpec{
			Image:              "flink:1.20",
			FlinkVersion:       "v1_20",
			ServiceAccount:     "flink",
			FlinkConfiguration: rawJSON(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp"}`),
			JobManager:         rawJSON(`{"resource":{"memory":"1g","cpu":1}}`),
			TaskManager:        rawJSON(`{"resource":{"memory":"1g","cpu":1}}`),
			Job: &v1alpha1.JobSpec{
				JarURI:      "local:///opt/flink/job.jar",
				Parallelism: ptr(int32(2)),
				UpgradeMode: mode,
			},
		}},
	}
}

func rawJSON(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func ptr[T any](v T) *T { return &v }

func newWorld(t testing.TB, mode string) *world {
	return &world{
		t: t,
		parent: &v1alpha1.FlinkBlueGreenDeployment{
			ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "prod", Generation: 1,
				Annotations: map[string]string{v1alpha1.RevisionAnnotation: "main@sha1:r1"}},
			Spec: baseSpec(mode),
		},
		children: map[Color]*Child{},
		snaps:    map[string]*simSnap{},
		now:      t0,
		window:   Window{Open: true},
		lineage:  map[string]int{},
		byHand:   map[string]bool{},
	}
}

func (w *world) status() *v1alpha1.FlinkBlueGreenDeploymentStatus { return &w.parent.Status }

func (w *world) input() Input {
	in := Input{Parent: w.parent.DeepCopy(), Window: w.window, Now: w.now, Record: w.record, RestoreSourceLive: w.restoreSourceLive}
	if c := w.children[Blue]; c != nil {
		cc := *c
		cc.Spec = *c.Spec.DeepCopy()
		in.Blue = &cc
	}
	if c := w.children[Green]; c != nil {
		cc := *c
		cc.Spec = *c.Spec.DeepCopy()
		in.Green = &cc
	}
	if sp := w.status().Savepoint; sp != nil {
		if s := w.snaps[sp.Name]; s != nil {
			snap := s.Snapshot
			in.Snapshot = &snap
		}
	}
	return in
}

// step runs one reconcile: decide, check, act, write status.
func (w *world) step() Decision {
	w.t.Helper()
	in := w.input()
	d, err := Decide(in)
	if err != nil {
		w.t.Fatalf("Decide: %v", err)
	}
	w.history = append(w.history, fmt.Sprintf("%s %s job=%s actions=%s events=%s",
		w.now.Format("15:04:05"), d.Status.BlueGreenState, d.Status.JobStatus.State, describeActions(d.Actions), describeEvents(d.Events)))
	w.checkDecision(in, d)
	for _, a := range d.Actions {
		w.act(a)
	}
	if w.dropNext {
		w.dropNext = false
	} else {
		w.parent.Status = *d.Status.DeepCopy()
		w.checkWorld(in, d)
		if len(d.Actions) == 0 {
			w.checkFixpoint(d)
		}
	}
	w.last = d
	return d
}

func (w *world) fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf(format+"\nhistory:\n  %s", append(args, strings.Join(w.history, "\n  "))...)
}

func describeActions(as []Action) string {
	var s []string
	for _, a := range as {
		switch a.Type {
		case ApplyChild:
			s = append(s, fmt.Sprintf("apply(%s,%s,sp=%q)", a.Child.Name, a.Child.Spec.JobStateOrDefault(), a.Child.Spec.Job.InitialSavepointPath))
		case DeleteChild:
			s = append(s, "delete("+a.ChildName+")")
		case CreateSnapshot:
			s = append(s, "snapshot("+a.Snapshot.Name+" of "+a.Snapshot.JobName+")")
		}
	}
	return "[" + strings.Join(s, " ") + "]"
}

func describeEvents(es []Event) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Reason)
	}
	return strings.Join(s, ",")
}

func (w *world) act(a Action) {
	switch a.Type {
	case ApplyChild:
		w.applyChild(a.Child)
	case DeleteChild:
		for c, ch := range w.children {
			if ch.Name == a.ChildName && !ch.Deleting {
				ch.Deleting = true // the Flink operator's finalizer holds it a while
				w.children[c] = ch
			}
		}
	case CreateSnapshot:
		if _, ok := w.snaps[a.Snapshot.Name]; !ok {
			w.snaps[a.Snapshot.Name] = &simSnap{Snapshot: Snapshot{Name: a.Snapshot.Name, State: SnapshotTriggerPending, LastCompleted: recordLastCompleted(a.Snapshot)},
				job: a.Snapshot.JobName, lineage: w.lineage[a.Snapshot.JobName]}
			if w.snapshotsIgnored {
				w.snaps[a.Snapshot.Name].State = ""
			}
		}
	}
}

func recordLastCompleted(s *SnapshotSpec) string {
	if s.Record == nil {
		return ""
	}
	return s.Record.LastCompleted
}

func (w *world) applyChild(cs *ChildSpec) {
	c := w.children[cs.Color]
	if c != nil {
		c.Unowned = false // the adapter's apply sets the parent's owner reference
	}
	if c != nil && reflect.DeepEqual(c.Spec, cs.Spec) && c.Revision == cs.Revision {
		return // server-side apply of the same object is a no-op
	}
	if c == nil {
		c = &Child{Name: cs.Name, Color: cs.Color, LifecycleState: "CREATED"}
		w.children[cs.Color] = c
	} else {
		c.LifecycleState = "UPGRADING"
	}
	if !reflect.DeepEqual(c.Spec, cs.Spec) {
		w.lineage[cs.Name]++
		c.JobState = "RECONCILING"
	}
	c.Spec = *cs.Spec.DeepCopy()
	c.Revision = cs.Revision
}

// Simulated Flink operator transitions.

func (w *world) ready(c Color) {
	ch := w.mustChild(c)
	if ch.suspendedSpec() {
		w.fatalf("ready(%s): spec is suspended", c)
	}
	w.jobSeq++
	ch.LifecycleState, ch.JobState, ch.JobID = LifecycleStable, JobRunning, fmt.Sprintf("job%04d", w.jobSeq)
}

func (w *world) failChild(c Color) {
	ch := w.mustChild(c)
	ch.LifecycleState, ch.JobState = "FAILED", "FAILED"
}

func (w *world) suspendDone(c Color) {
	ch := w.mustChild(c)
	if !ch.suspendedSpec() {
		w.fatalf("suspendDone(%s): spec is not suspended", c)
	}
	ch.LifecycleState, ch.JobState = LifecycleSuspended, "FINISHED"
}

func (w *world) mustChild(c Color) *Child {
	ch := w.children[c]
	if ch == nil {
		w.fatalf("no %s child", c)
	}
	return ch
}

// gone completes the deletion of children marked Deleting.
func (w *world) gone() {
	for c, ch := range w.children {
		if ch.Deleting {
			delete(w.children, c)
		}
	}
}

func (w *world) deleteByHand(c Color) {
	ch := w.mustChild(c)
	ch.Deleting = true
	w.byHand[ch.Name] = true
}

func (w *world) snapshot() *simSnap {
	sp := w.status().Savepoint
	if sp == nil || w.snaps[sp.Name] == nil {
		w.fatalf("no snapshot in progress")
	}
	return w.snaps[sp.Name]
}

func (w *world) completeSnapshot() string {
	s := w.snapshot()
	s.State, s.Path = SnapshotCompleted, "file:/sp/savepoint-"+s.Name
	return strings.TrimPrefix(s.Path, "file:")
}

func (w *world) failSnapshot(state, msg string) {
	s := w.snapshot()
	s.State, s.Error = state, msg
}

func (w *world) advance(d time.Duration) { w.now = w.now.Add(d) }

func (w *world) edit(f func(s *v1alpha1.FlinkBlueGreenDeploymentSpec), rev string) {
	f(&w.parent.Spec)
	w.parent.Generation++
	w.parent.Annotations[v1alpha1.RevisionAnnotation] = rev
}

func (w *world) annotate(key, value string) { w.parent.Annotations[key] = value }

func (w *world) config(key, value string) { w.parent.Spec.Configuration[key] = value }

// Expectations.

func (w *world) expectState(s v1alpha1.BlueGreenState, j v1alpha1.JobState) {
	w.t.Helper()
	st := w.status()
	if st.BlueGreenState != s || st.JobStatus.State != j {
		w.fatalf("state = %s/%s (error %q), want %s/%s", st.BlueGreenState, st.JobStatus.State, st.Error, s, j)
	}
}

func (w *world) expectChildren(colors ...Color) {
	w.t.Helper()
	if len(w.children) != len(colors) {
		w.fatalf("children = %v, want %v", w.childNames(), colors)
	}
	for _, c := range colors {
		if w.children[c] == nil {
			w.fatalf("children = %v, want %v", w.childNames(), colors)
		}
	}
}

func (w *world) childNames() []string {
	var s []string
	for _, c := range []Color{Blue, Green} {
		if ch := w.children[c]; ch != nil {
			s = append(s, fmt.Sprintf("%s(%s/%s,%s,del=%v)", ch.Name, ch.LifecycleState, ch.JobState, ch.Spec.JobStateOrDefault(), ch.Deleting))
		}
	}
	return s
}

func (w *world) expectNoop(d Decision) {
	w.t.Helper()
	if len(d.Actions) != 0 || len(d.Events) != 0 {
		w.fatalf("want no-op, got actions %s events %s", describeActions(d.Actions), describeEvents(d.Events))
	}
}

func (w *world) condition(typ string) *metav1.Condition {
	return findCondition(w.status().Conditions, typ)
}

func (w *world) specJSON() string {
	b, _ := json.Marshal(lastSpecJSON{Spec: w.parent.Spec})
	return string(b)
}

// expectEvents checks the reasons of d's events, in order.
func (w *world) expectEvents(d Decision, reasons ...string) {
	w.t.Helper()
	if got := describeEvents(d.Events); got != strings.Join(reasons, ",") {
		w.fatalf("events %q, want %q", got, strings.Join(reasons, ","))
	}
}

// eventMessage is the message of d's event with the reason, "" if none.
func eventMessage(d Decision, reason string) string {
	for _, e := range d.Events {
		if e.Reason == reason {
			return e.Message
		}
	}
	return ""
}

// expectCondition checks a condition's status and reason, and that its
// message contains msg.
func (w *world) expectCondition(typ string, status metav1.ConditionStatus, reason, msg string) {
	w.t.Helper()
	c := w.condition(typ)
	if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, msg) {
		w.fatalf("condition %s = %+v, want %s/%s with %q", typ, c, status, reason, msg)
	}
}

func (w *world) expectNoCondition(typ string) {
	w.t.Helper()
	if c := w.condition(typ); c != nil {
		w.fatalf("condition %s = %+v, want none", typ, c)
	}
}

func (w *world) expectError(substr string) {
	w.t.Helper()
	if !strings.Contains(w.status().Error, substr) {
		w.fatalf("error %q, want it to contain %q", w.status().Error, substr)
	}
}

func (w *world) expectRequeue(d Decision, want time.Duration) {
	w.t.Helper()
	if d.RequeueAfter != want {
		w.fatalf("requeue after %s, want %s", d.RequeueAfter, want)
	}
}

func (w *world) expectTime(what string, got *metav1.Time, want time.Time) {
	w.t.Helper()
	if got == nil || !got.Time.Equal(want) {
		w.fatalf("%s = %v, want %v", what, got, want)
	}
}

// expectApply checks that d applies exactly one child, named name, and
// returns its spec.
func (w *world) expectApply(d Decision, name string) *v1alpha1.FlinkDeploymentSpec {
	w.t.Helper()
	if len(d.Actions) != 1 || d.Actions[0].Type != ApplyChild || d.Actions[0].Child.Name != name {
		w.fatalf("want %s applied, got %s", name, describeActions(d.Actions))
	}
	return &d.Actions[0].Child.Spec
}

func (w *world) expectDelete(d Decision, name string) {
	w.t.Helper()
	for _, a := range d.Actions {
		if a.Type == DeleteChild && a.ChildName == name {
			return
		}
	}
	w.fatalf("want %s deleted, got %s", name, describeActions(d.Actions))
}

// stepRejecting is a reconcile in which the API server refuses for good
// the first action that matches: the adapter runs the actions before it,
// then decides again on a fresh observation with the rejection, and runs
// that decision (the contract in doc.go).
func (w *world) stepRejecting(match func(Action) bool, msg string) Decision {
	w.t.Helper()
	d, err := Decide(w.input())
	if err != nil {
		w.fatalf("Decide: %v", err)
	}
	for _, a := range d.Actions {
		if !match(a) {
			w.act(a)
			continue
		}
		in := w.input()
		in.Rejection = &Rejection{Action: a, Message: msg}
		d2, err := Decide(in)
		if err != nil {
			w.fatalf("Decide: %v", err)
		}
		w.history = append(w.history, fmt.Sprintf("%s rejected %s: %s job=%s actions=%s events=%s", w.now.Format("15:04:05"),
			describeActions([]Action{a}), d2.Status.BlueGreenState, d2.Status.JobStatus.State, describeActions(d2.Actions), describeEvents(d2.Events)))
		w.checkDecision(in, d2)
		for _, a2 := range d2.Actions {
			w.act(a2)
		}
		w.parent.Status = *d2.Status.DeepCopy()
		w.checkWorld(in, d2)
		return d2
	}
	w.fatalf("no action to reject in %s", describeActions(d.Actions))
	return Decision{}
}

func applyOf(name string) func(Action) bool {
	return func(a Action) bool { return a.Type == ApplyChild && a.Child.Name == name }
}

func deleteOf(name string) func(Action) bool {
	return func(a Action) bool { return a.Type == DeleteChild && a.ChildName == name }
}

// toActiveGreen: blue deployed (after setup), a savepoint transition to
// green, blue gone. It returns the savepoint green started from.
func toActiveGreen(t *testing.T, mode string, setup ...func(w *world)) (*world, string) {
	w := newWorld(t, mode)
	for _, f := range setup {
		f(w)
	}
	w.step()
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	sp := startTransition(w, mode)
	w.ready(Green)
	w.step()
	w.gone()
	w.expectState(sActiveGreen, jRunning)
	return w, sp
}

// parallelismDefault commits a flinkConfiguration change that is patched
// in place.
func parallelismDefault(w *world, n, rev string) {
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp","parallelism.default":"` + n + `"}`)
	}, rev)
}

// running is a child of colour c that runs the template (with job.state
// running), as observed from the cluster.
func (w *world) running(c Color, created time.Time) *Child {
	spec := *w.parent.Spec.Template.Spec.DeepCopy()
	spec.Job.State = v1alpha1.JobStateRunning
	ch := &Child{Name: ChildName(w.parent.Name, c), Color: c, Spec: spec, Revision: "main@sha1:" + strings.ToLower(string(c)),
		LifecycleState: LifecycleStable, JobState: JobRunning, JobID: "job-" + string(c), Created: created}
	w.children[c] = ch
	return ch
}
