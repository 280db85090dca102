/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"reflect"
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// checkDecision holds the safety rules on one decision, judged against the
// world it was made in: Decide is deterministic; every apply, delete and
// savepoint it asks for is safe (checkApply, checkDelete); it reports no
// event without a status change; its history applies.
func (w *world) checkDecision(in Input, d Decision) {
	w.t.Helper()
	again, err := Decide(in)
	if err != nil || !reflect.DeepEqual(again, d) {
		w.fatalf("Decide is not deterministic")
	}
	if d.RequeueAfter < 0 {
		w.fatalf("negative requeue %s", d.RequeueAfter)
	}
	prev := in.Parent.Status
	for _, a := range d.Actions {
		switch a.Type {
		case ApplyChild:
			w.checkApply(in, prev, d.Status, a.Child)
		case DeleteChild:
			w.checkDelete(in, prev, a.ChildName)
		case CreateSnapshot:
			if a.Snapshot.JobName != prev.ActiveDeployment && a.Snapshot.JobName != d.Status.ActiveDeployment {
				w.fatalf("savepoint of %s, which is not active", a.Snapshot.JobName)
			}
			if len(a.Snapshot.Name) > 63 || strings.Trim(a.Snapshot.Name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				w.fatalf("snapshot name %q is not a DNS-1123 label", a.Snapshot.Name)
			}
		}
	}
	if reflect.DeepEqual(d.Status, prev) && len(d.Events) > 0 {
		w.fatalf("events without a status change: %s", describeEvents(d.Events))
	}
	if err := checkHistoryApplies(d); err != nil {
		w.fatalf("%v", err)
	}
}

func (w *world) checkApply(in Input, prev, next v1alpha1.FlinkBlueGreenDeploymentStatus, cs *ChildSpec) {
	w.t.Helper()
	if cs.Name != ChildName(w.parent.Name, cs.Color) {
		w.fatalf("child %s has colour %s", cs.Name, cs.Color)
	}
	validChildSpec(w, &cs.Spec)
	existing := w.children[cs.Color]
	if existing != nil && existing.Deleting {
		w.fatalf("apply to %s while it is being deleted", cs.Name)
	}
	suspends := cs.Spec.Suspended()
	if cs.Name == prev.ActiveDeployment && suspends && !w.templateSuspended(in) {
		w.fatalf("active %s suspended without the user asking", cs.Name)
	}
	if next.ActiveDeployment != cs.Name { // not an in-place change after a cut-over
		w.checkLineage(in, prev, cs)
	}
}

// checkLineage: a new colour of a stateful transition starts from a
// savepoint of the job it replaces, taken from that job's current run.
func (w *world) checkLineage(in Input, prev v1alpha1.FlinkBlueGreenDeploymentStatus, cs *ChildSpec) {
	w.t.Helper()
	active := w.children[otherColorOf(cs.Color)]
	if prev.ActiveDeployment == "" || cs.Name == prev.ActiveDeployment || active == nil || active.Deleting ||
		active.Name != prev.ActiveDeployment || cs.Spec.Suspended() ||
		!cs.Spec.Stateful() || active.suspendedSpec() {
		return
	}
	path := cs.Spec.Job.InitialSavepointPath
	if path == in.Parent.Spec.Template.Spec.Job.InitialSavepointPath {
		base := (&decider{spec: &in.Parent.Spec}).baseOf(active)
		if Classify(base, &in.Parent.Spec).Type != DiffSavepointRedeploy {
			w.fatalf("%s started without a savepoint in a stateful transition", cs.Name)
		}
		return
	}
	for _, s := range w.snaps {
		if s.State == SnapshotCompleted && strings.TrimPrefix(s.Path, "file:") == path {
			if s.job != active.Name || s.lineage != w.lineage[active.Name] {
				w.fatalf("%s starts from %s, taken from %s run %d, but %s now runs %d", cs.Name, path, s.job, s.lineage, active.Name, w.lineage[active.Name])
			}
			return
		}
	}
	w.fatalf("%s starts from %q, which is no completed savepoint", cs.Name, path)
}

func otherColorOf(c Color) Color { return c.Other() }

func (w *world) templateSuspended(in Input) bool {
	return in.Parent.Spec.Template.Spec.Suspended()
}

func (w *world) checkDelete(in Input, prev v1alpha1.FlinkBlueGreenDeploymentStatus, name string) {
	w.t.Helper()
	var victim, other *Child
	for _, c := range []*Child{in.Blue, in.Green} {
		if c == nil {
			continue
		}
		if c.Name == name {
			victim = c
		} else {
			other = c
		}
	}
	if victim == nil {
		w.fatalf("delete of absent child %s", name)
	}
	if !in.Parent.DeletionTimestamp.IsZero() {
		w.checkFinalDelete(in, victim)
		return
	}
	if name == prev.ActiveDeployment && !other.Ready() {
		w.fatalf("active %s deleted before the new colour is ready", name)
	}
}

// checkFinalDelete: a deletion deletes a stateful running job only once
// its final savepoint is settled, or the savepoint timeout counted from
// the deletion has passed.
func (w *world) checkFinalDelete(in Input, victim *Child) {
	w.t.Helper()
	if !victim.Spec.Stateful() || !victim.Ready() || victim.Name != in.Parent.Status.ActiveDeployment {
		return
	}
	if s := in.Snapshot; s != nil && s.Name == FinalSnapshotName(in.Parent) &&
		(s.State == SnapshotCompleted || s.State == SnapshotFailed || s.State == SnapshotAbandoned) {
		return
	}
	if !in.Now.Before(in.Parent.DeletionTimestamp.Add(10*time.Minute)) || in.Rejection != nil {
		return
	}
	w.fatalf("running stateful %s deleted before its final savepoint settled", victim.Name)
}

func validChildSpec(w *world, s *v1alpha1.FlinkDeploymentSpec) {
	w.t.Helper()
	if s.Job == nil {
		w.fatalf("child without job")
	}
	switch s.Job.State {
	case "", v1alpha1.JobStateRunning, v1alpha1.JobStateSuspended:
	default:
		w.fatalf("job.state %q is not in the Flink CRD enum", s.Job.State)
	}
	switch s.Job.UpgradeMode {
	case "", v1alpha1.UpgradeModeSavepoint, v1alpha1.UpgradeModeLastState, v1alpha1.UpgradeModeStateless:
	default:
		w.fatalf("job.upgradeMode %q is not in the Flink CRD enum", s.Job.UpgradeMode)
	}
}

// checkWorld holds the invariants on the world after a decision.
func (w *world) checkWorld(in Input, d Decision) {
	w.t.Helper()
	st, prev := w.status(), in.Parent.Status
	switch st.BlueGreenState {
	case v1alpha1.ActiveBlue, v1alpha1.SavepointingBlue:
		w.expectActiveName(Blue)
	case v1alpha1.ActiveGreen, v1alpha1.SavepointingGreen:
		w.expectActiveName(Green)
	}
	// A failure before cut-over leaves the previously active job running.
	if was := prevActiveColor(prev); was != "" && st.BlueGreenState == activeState(was) &&
		(prev.BlueGreenState.Savepointing() || (prev.BlueGreenState.InProgress() && prev.BlueGreenState != transitioningTo(was))) {
		name := ChildName(w.parent.Name, was)
		ch := w.children[was]
		if !w.byHand[name] && (ch == nil || ch.Deleting || ch.suspendedSpec() && !w.templateSuspended(in)) {
			w.fatalf("rolled back to %s, but it is not running", name)
		}
	}
	if st.JobStatus.State == v1alpha1.JobFailing && st.Error == "" {
		w.fatalf("FAILING without an error message")
	}
	if c := findCondition(st.Conditions, v1alpha1.ReadyCondition); c == nil {
		w.fatalf("no Ready condition")
	}
	if err := checkHistory(&prev, st); err != nil {
		w.fatalf("%v", err)
	}
	if err := checkSavepointRecorded(st.History, w.completedAt); err != nil {
		w.fatalf("%v", err)
	}
}

// completedAt is the path of the completed snapshot name.
func (w *world) completedAt(name string) (string, bool) {
	s := w.snaps[name]
	if s == nil || s.State != SnapshotCompleted {
		return "", false
	}
	return strings.TrimPrefix(s.Path, "file:"), true
}

func prevActiveColor(s v1alpha1.FlinkBlueGreenDeploymentStatus) Color {
	switch {
	case s.ActiveDeployment == "":
		return ""
	case strings.HasSuffix(s.ActiveDeployment, "-blue"):
		return Blue
	}
	return Green
}

func (w *world) expectActiveName(c Color) {
	w.t.Helper()
	if w.status().ActiveDeployment != ChildName(w.parent.Name, c) {
		w.fatalf("state %s but activeDeployment %q", w.status().BlueGreenState, w.status().ActiveDeployment)
	}
}

// checkFixpoint: a decision without actions is final for an unchanged
// world: deciding again changes nothing and emits nothing.
func (w *world) checkFixpoint(d Decision) {
	w.t.Helper()
	again, err := Decide(w.input())
	if err != nil {
		w.fatalf("Decide: %v", err)
	}
	if !reflect.DeepEqual(again.Status, d.Status) || len(again.Actions) > 0 || len(again.Events) > 0 {
		w.fatalf("not a fixpoint: status changed=%v actions=%s events=%s\n%+v\n%+v", !reflect.DeepEqual(again.Status, d.Status),
			describeActions(again.Actions), describeEvents(again.Events), d.Status, again.Status)
	}
}
