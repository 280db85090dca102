/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// lifecycle.go: the state lifecycle of a FlinkBlueGreenDeployment — where its
// first job starts from (a state record, the template, empty), and the final
// savepoint and record its deletion takes.

package bluegreen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The state lifecycle: a deletion keeps the state of a stateful job in a
// record (a FlinkStateSnapshot not owned by the parent), and the first job
// of a FlinkBlueGreenDeployment of that name starts from it, unless Git
// says otherwise (an initialSavepointPath, bggitops.dev/initial-state).

// RecordOf is the name whose state record the first job of p starts
// from: bggitops.dev/restore-from when set (a rename), else p's own.
func RecordOf(p *v1alpha1.FlinkBlueGreenDeployment) string {
	if from := strings.TrimSpace(p.Annotations[v1alpha1.RestoreFromAnnotation]); from != "" {
		return from
	}
	return p.Name
}

// RestoresOnPurpose reports a FlinkBlueGreenDeployment that names the
// record its first job starts from (bggitops.dev/restore-from, its own
// name included): without that record it does not start.
func RestoresOnPurpose(p *v1alpha1.FlinkBlueGreenDeployment) bool {
	return strings.TrimSpace(p.Annotations[v1alpha1.RestoreFromAnnotation]) != ""
}

// InitialStateError says why bggitops.dev/initial-state, when set, holds a
// value the first deployment fails on ("" when it is unset or empty).
func InitialStateError(p *v1alpha1.FlinkBlueGreenDeployment) string {
	v, set := p.Annotations[v1alpha1.InitialStateAnnotation]
	if !set || StartsEmptyOnPurpose(p) {
		return ""
	}
	return fmt.Sprintf("%s is %q: the one value it takes is %s (or remove it to start from the state record of %s, if any)",
		v1alpha1.InitialStateAnnotation, v, v1alpha1.InitialStateEmpty, RecordOf(p))
}

// StartsEmptyOnPurpose reports a FlinkBlueGreenDeployment whose first job
// starts empty whatever record exists (bggitops.dev/initial-state: empty).
func StartsEmptyOnPurpose(p *v1alpha1.FlinkBlueGreenDeployment) bool {
	return strings.TrimSpace(p.Annotations[v1alpha1.InitialStateAnnotation]) == v1alpha1.InitialStateEmpty
}

// FinalSnapshotName is the FlinkStateSnapshot a deletion of p takes: one
// per object (its uid), so a later object of the same name takes its own.
func FinalSnapshotName(p *v1alpha1.FlinkBlueGreenDeployment) string {
	h := sha256.Sum256([]byte(p.Namespace + "/" + p.Name + "/" + string(p.UID)))
	sum := hex.EncodeToString(h[:])[:10]
	return dnsPrefix(p.Name, 63-len("-final-")-len(sum)) + "-final-" + sum
}

// settled reports a record whose content will not change: complete as
// created, completed, or failed.
func (r *Record) settled() bool {
	switch {
	case r.Existing:
		return true
	case r.State == SnapshotCompleted || r.State == SnapshotFailed || r.State == SnapshotAbandoned:
		return true
	}
	return false
}

// RestorePath is the savepoint a job starts from when it restores r: its own,
// or, when that never completed, the last one known before it ("" none).
func (r *Record) RestorePath() string {
	if r.Existing || r.State == SnapshotCompleted {
		return r.Path
	}
	return r.LastCompleted
}

// firstStart is where the first job's state comes from.
type firstStart struct {
	path, record string
	empty        bool
	reason, msg  string // the event that says so, if any
}

// firstState is where the first job starts from: the template's
// initialSavepointPath (Git wins), nothing for a stateless job or one
// that starts empty on purpose, else the record of RecordOf. ok is false
// when the first job must not start yet: the record is still being taken
// (waited for, within the savepoint timeout), or a state is known to
// exist and no savepoint of it does (the deployment fails, saying how to
// go on, and is looked at again).
func (d *decider) firstState() (s firstStart, ok bool) {
	if p := d.templateSavepointPath(); p != "" || !d.stateful() {
		return firstStart{path: p}, true
	}
	if msg := InitialStateError(d.p); msg != "" {
		d.noRecord(msg)
		return firstStart{}, false
	}
	if StartsEmptyOnPurpose(d.p) {
		return firstStart{empty: true, reason: "StartedEmpty",
			msg: "the first job starts with empty state, as " + v1alpha1.InitialStateAnnotation + ": empty asks"}, true
	}
	of, r := RecordOf(d.p), d.in.Record
	switch {
	case of != d.p.Name && d.in.RestoreSourceLive:
		d.progressing("WaitingForStateRecord", "waiting for %s to be deleted (pruned from Git): the first job starts from the state its deletion keeps", of)
		d.requeue(d.t.interval)
		return firstStart{}, false
	case r == nil && RestoresOnPurpose(d.p):
		d.noRecord(fmt.Sprintf("%s names %s, but no FlinkStateSnapshot records its state in namespace %s (one is kept when %s is deleted, for example pruned from Git)",
			v1alpha1.RestoreFromAnnotation, of, d.p.Namespace, of))
		return firstStart{}, false
	case r == nil:
		return firstStart{}, true
	case !r.settled() && !r.Final && d.now.Before(r.Created.Add(d.t.savepointTimeout)):
		d.progressing("WaitingForStateRecord", "waiting for the final savepoint %s of %s: the first job starts from it", r.Name, r.Of)
		d.requeue(d.t.interval)
		return firstStart{}, false
	}
	path := r.RestorePath()
	if path == "" {
		d.noRecord(fmt.Sprintf("FlinkStateSnapshot %s records the state of %s, but holds no completed savepoint (%s): set spec.template.spec.job.initialSavepointPath, or %s: empty to start with empty state",
			r.Name, r.Of, orDash(r.Error), v1alpha1.InitialStateAnnotation))
		return firstStart{}, false
	}
	msg := fmt.Sprintf("the first job starts from %s, the state FlinkStateSnapshot %s kept of %s (job %s, %s)",
		path, r.Name, r.Of, orDash(r.Job), revOr(r.Revision))
	if path != r.Path {
		msg += "; its own savepoint did not complete, so this is the last one that did"
	}
	return firstStart{path: path, record: r.Name, reason: "StateRestored", msg: msg}, true
}

// foreign is a child of an earlier object of the parent's name, if any.
func (d *decider) foreign() *Child {
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c != nil && c.Foreign {
			return c
		}
	}
	return nil
}

// waitForeign waits for the children of an earlier object of the name to
// go before anything else: their jobs and savepoints are not this one's
// (its first job starts from the earlier one's record, if any).
func (d *decider) waitForeign(c *Child) {
	d.progressing("WaitingForEarlierChildren", "FlinkDeployment %s of an earlier FlinkBlueGreenDeployment named %s is being deleted: nothing starts until it is gone", c.Name, d.p.Name)
	d.requeue(d.t.interval)
}

// noRecord fails the first deployment: starting would lose a state that
// exists. It is looked at again (the record may appear, or Git change).
func (d *decider) noRecord(msg string) {
	if d.st.Error != msg {
		d.event(true, "StateRecordMissing", "%s", msg)
	}
	d.fail(msg)
	d.requeue(d.t.interval)
}

// finalizing handles a FlinkBlueGreenDeployment being deleted: a
// transition in progress ends (the state holder is the colour that was
// active, or the new one when only it runs), the holder's job, when
// stateful, is savepointed into a record, bounded by the savepoint
// timeout counted from the deletion; then the children are deleted and
// the finalizer goes. A stateful holder always leaves a record, one that
// holds no savepoint included, so that nothing later starts empty (or
// from older state) for want of one. A deletion that orphans the
// children leaves them running, and children owned by nothing are never
// this deletion's (see orphan.go).
func (d *decider) finalizing() {
	if d.orphaning() {
		d.orphanChildren()
		return
	}
	orphaned := d.unowned() != nil // the collector orphaned them: they run on
	d.forgetUnowned()
	d.end(v1alpha1.RolloutAborted, "the FlinkBlueGreenDeployment is being deleted")
	d.setJob(v1alpha1.JobReconciling, "") // its job is being stopped
	g := d.holderChild()                  // being deleted or not
	var h *Child                          // the holder a savepoint can still be taken of
	if g != nil && !g.Deleting {
		h = g
	}
	if g == nil && !orphaned {
		g = d.goneHolder() // read before the status is rewritten below
	}
	if s := d.st.BlueGreenState; g != nil && s == "" || s.InProgress() {
		// The transition is over (or the status was lost): the holder
		// is the active colour, or, with none left, the colour that was.
		c := stateColour(s)
		if s.Transitioning() {
			c = c.Other()
		}
		if g != nil {
			c = g.Color
		}
		d.st.BlueGreenState, d.st.ActiveDeployment = activeState(c), d.childName(c)
		d.resetMarkers()
	}
	refused := ""
	if rej := d.in.Rejection; rej != nil && rej.Action.Type == DeleteChild {
		refused = rej.Action.ChildName
		d.event(true, "ChildDeletionRefused", "%s; the garbage collector deletes the children it owns", rej.cause("the API server refused to delete FlinkDeployment ", refused))
	}
	if h == nil && g != nil {
		d.recordDeleted(g)
	}
	waiting := h != nil && refused != h.Name && d.awaitsFinalSavepoint(h)
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		// The other colour at once: it holds no state the record needs.
		if c != nil && !c.Deleting && c.Name != refused && (c != h || !waiting) {
			d.deleteChild(c.Color)
		}
	}
	if waiting {
		return
	}
	d.progressing("Deleting", "deleting the children of %s", d.p.Name)
	d.out.Finalize = true
}

// holderChild is the child whose job holds the state: the active colour,
// also during a transition, unless only the new colour runs; being
// deleted or not; nil when none (but an earlier object's) is left.
func (d *decider) holderChild() *Child {
	s := d.st.BlueGreenState
	var c Color
	switch {
	case s.Active() || s.Savepointing():
		c = stateColour(s)
	case s.Transitioning():
		c = stateColour(s).Other()
		oc, tc := d.child(c), d.child(c.Other())
		if oc == nil || oc.Deleting || !oc.Ready() && tc.Ready() {
			c = c.Other()
		}
	default:
		if a := d.adoptee(); a != nil {
			return a
		}
		return d.deletingChild() // the status was lost, and so were they
	}
	if ch := d.child(c); ch != nil && !ch.Foreign {
		return ch
	}
	return nil
}

// deletingChild is a child of the parent being deleted, if any.
func (d *decider) deletingChild() *Child {
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c != nil && c.Deleting && !c.Foreign {
			return c
		}
	}
	return nil
}

// goneHolder stands for the holder when no child of the parent is left,
// the garbage collector of a foreground deletion (or a person) having
// deleted it before the deletion was first seen: the child the stored
// status names active (the colour being deployed by a first deployment),
// with the spec last rolled out and the newest savepoint of its job the
// history knows; nil when no job is known to have run.
func (d *decider) goneHolder() *Child {
	st := &d.in.Parent.Status
	s, name := st.BlueGreenState, st.ActiveDeployment
	switch {
	case s.Transitioning() && name == "":
		name = d.childName(stateColour(s)) // a first deployment under way
	case !s.Active() && !s.InProgress() || name == "":
		return nil
	}
	spec := d.spec.Template.Spec.DeepCopy()
	if d.last != nil {
		spec = d.last.Template.Spec.DeepCopy() // what was last rolled out, not a commit since
	}
	spec.Job.InitialSavepointPath = d.startedFrom(name)
	c := Blue
	if name == d.childName(Green) {
		c = Green
	}
	return &Child{Name: name, Color: c, Spec: *spec, Revision: d.st.ActiveRevision, Deleting: true}
}

// startedFrom is the newest savepoint of the job of child name the
// history knows: one a blue/green rollout from it took (completed, the
// rollout cut over or not), else the one the rollout that started it
// restored; "" after an in-place change since (its job restarted from a
// savepoint the status does not know) or when none is known.
func (d *decider) startedFrom(name string) string {
	h := d.in.Parent.Status.History
	for i := len(h) - 1; i >= 0; i-- {
		r := h[i]
		switch {
		case r.To == name && r.Kind == v1alpha1.RolloutInPlace:
			return "" // restarted from a savepoint the status does not know
		case r.To == name:
			return r.RestoredFrom // the rollout that started its job, whatever came of it
		case r.From == name && r.Kind == v1alpha1.RolloutBlueGreen && r.SavepointPath != "":
			return r.SavepointPath // a newer savepoint of its job, taken by a rollout from it
		}
	}
	return ""
}

// recordDeleted records the state of a holder something else deletes
// first (a foreground deletion, a child deleted by hand): too late for a
// savepoint, its last completed one is kept, or, with none known, a
// savepoint is asked for that the Flink operator fails (the job is being
// cancelled), so that a later object of the name does not start empty.
func (d *decider) recordDeleted(g *Child) {
	name := FinalSnapshotName(d.p)
	if !g.Spec.Stateful() || d.st.Savepoint != nil && d.st.Savepoint.Name == name {
		return
	}
	lc := d.lastCompleted(g)
	if rej := d.in.Rejection; rej != nil && rej.Action.Type == CreateSnapshot {
		d.event(true, "FinalSavepointRefused", "%s; FlinkDeployment %s was deleted first and no record is kept",
			rej.cause("the API server refused the state record ", name), g.Name)
		return
	}
	d.askFinalSavepoint(g, name, lc)
	d.st.Savepoint.Path = lc
	if d.child(g.Color) == nil { // goneHolder's
		d.event(true, "ChildDeletedFirst", "FlinkDeployment %s was gone when the deletion was first seen (a foreground deletion, or by hand), so its state is recorded from the status, which knows none of its checkpoints: %s",
			g.Name, d.nextStart(lc))
		return
	}
	d.event(true, "ChildDeletedFirst", "FlinkDeployment %s was deleted before its final savepoint could be taken (a foreground deletion, or by hand): %s",
		g.Name, d.nextStart(lc))
}

// stateColour is the colour a state names (ACTIVE_X, SAVEPOINTING_X,
// TRANSITIONING_TO_X: X).
func stateColour(s v1alpha1.BlueGreenState) Color {
	if strings.HasSuffix(string(s), "_GREEN") {
		return Green
	}
	return Blue
}

// awaitsFinalSavepoint asks for, or waits for, the final savepoint of h's
// job; false once there is nothing (more) to wait for. A stopped job
// (jobStopped) is recorded by its last completed savepoint; any other,
// one restarting included, is asked for a savepoint, the last completed
// one being what the record holds if it fails or times out; with none
// known, the failed record says that no state was kept.
func (d *decider) awaitsFinalSavepoint(h *Child) bool {
	if !h.Spec.Stateful() {
		return false
	}
	name := FinalSnapshotName(d.p)
	snap := d.in.Snapshot
	if snap != nil && snap.Name != name {
		snap = nil
	}
	asked := d.st.Savepoint != nil && d.st.Savepoint.Name == name
	lc := d.lastCompleted(h)
	switch {
	case d.in.Rejection != nil && d.in.Rejection.Action.Type == CreateSnapshot:
		d.event(true, "FinalSavepointRefused", "%s; the children are deleted without a final savepoint",
			d.in.Rejection.cause("the API server refused the final savepoint ", name))
	case snap != nil && snap.State == SnapshotCompleted:
		d.st.Savepoint.Path = snap.Path
		d.event(false, "FinalSavepointCompleted", "final savepoint %s of %s kept as FlinkStateSnapshot %s: a FlinkBlueGreenDeployment named %s created later starts from it",
			snap.Path, h.Name, name, d.p.Name)
	case snap != nil && (snap.State == SnapshotFailed || snap.State == SnapshotAbandoned):
		d.event(true, "FinalSavepointFailed", "final savepoint %s of %s %s (%s): the children are deleted; %s",
			name, h.Name, strings.ToLower(snap.State), orDash(snap.Error), d.nextStart(snap.LastCompleted))
	case !d.now.Before(d.deletionDeadline()):
		recorded := lc
		if snap != nil {
			recorded = snap.LastCompleted
		} else if !asked {
			d.askFinalSavepoint(h, name, lc) // the record, whatever it holds
		}
		d.event(true, "FinalSavepointTimedOut", "final savepoint %s of %s did not complete within %s: the children are deleted; %s",
			name, h.Name, d.t.savepointTimeout, d.nextStart(recorded))
	case asked || snap != nil:
		if snap == nil {
			d.askFinalSavepoint(h, name, "") // not in the cache yet, or deleted: AlreadyExists is fine
		}
		d.waitFinal(name, h)
		return true
	case h.jobStopped() && lc != "":
		d.askFinalSavepoint(h, name, lc)
		d.st.Savepoint.Path = lc
		d.event(false, "StateRecorded", "%s does not run (%s): its last savepoint %s is kept as FlinkStateSnapshot %s for a FlinkBlueGreenDeployment named %s created later",
			h.Name, h.describe(), lc, name, d.p.Name)
	default:
		d.askFinalSavepoint(h, name, "")
		d.waitFinal(name, h)
		d.event(false, "FinalSavepointStarted", "deleted: taking the final savepoint %s of %s (job %s) before its children go",
			name, h.Name, orDash(h.JobID))
		return true
	}
	return false
}

func (d *decider) waitFinal(name string, h *Child) {
	d.progressing("FinalSavepoint", "taking the final savepoint %s of %s before deletion", name, h.Name)
	d.requeue(min(d.t.interval, d.deletionDeadline().Sub(d.now)))
}

// nextStart says where a later object of the name starts from.
func (d *decider) nextStart(lastCompleted string) string {
	if lastCompleted == "" {
		return "no savepoint of it is known: a FlinkBlueGreenDeployment named " + d.p.Name +
			" created later does not start until Git sets an initialSavepointPath or " + v1alpha1.InitialStateAnnotation + ": empty"
	}
	return "a FlinkBlueGreenDeployment named " + d.p.Name + " created later starts from the last completed savepoint, " + lastCompleted
}

// askFinalSavepoint creates the record of h's job: a savepoint, or, with
// existing set, that savepoint recorded as it is.
func (d *decider) askFinalSavepoint(h *Child, name, existing string) {
	format, _ := savepointFormat(&h.Spec) // the running job's: a bad value only leaves the default
	d.createSnapshot(&SnapshotSpec{Name: name, JobName: h.Name, FormatType: format, Revision: h.Revision, JobRevision: h.Revision,
		Record: &RecordSpec{JobID: h.JobID, LastCompleted: d.lastCompleted(h), Existing: existing}})
	if d.st.Savepoint == nil || d.st.Savepoint.Name != name {
		d.st.Savepoint = &v1alpha1.SavepointStatus{Name: name, TriggerTimestamp: d.ts(d.now)}
	}
}

// lastCompleted is the last savepoint of h's job known to have completed:
// the one a transition in progress took of it, the one the Flink operator
// took when it last upgraded or suspended it, or the one it started from.
func (d *decider) lastCompleted(h *Child) string {
	if sp := d.in.Parent.Status.Savepoint; sp != nil && sp.Path != "" && d.savepointOfRollout(sp.Name) {
		return sp.Path
	}
	if h.UpgradeSavepointPath != "" {
		return h.UpgradeSavepointPath
	}
	return ownPath(h)
}

// savepointOfRollout reports a savepoint that the blue/green rollout
// under way (as stored) took of its old colour.
func (d *decider) savepointOfRollout(name string) bool {
	h := d.in.Parent.Status.History
	if len(h) == 0 {
		return false
	}
	r := h[len(h)-1]
	return r.Outcome == v1alpha1.RolloutInProgress && r.Kind == v1alpha1.RolloutBlueGreen && r.SavepointName == name
}

// deletionDeadline is when a deletion stops waiting for its final
// savepoint: the savepoint timeout after it was first asked for (the
// earlier of the snapshot's creation and the request the status records:
// a snapshot deleted and asked for again gets no new timeout), or from
// now when it has not been: a deletion first seen late (the controller
// was down) still asks for one.
func (d *decider) deletionDeadline() time.Time {
	name := FinalSnapshotName(d.p)
	var asked time.Time
	if s := d.in.Snapshot; s != nil && s.Name == name && !s.Created.IsZero() {
		asked = s.Created
	}
	if sp := d.in.Parent.Status.Savepoint; sp != nil && sp.Name == name && sp.TriggerTimestamp != nil &&
		(asked.IsZero() || sp.TriggerTimestamp.Time.Before(asked)) {
		asked = sp.TriggerTimestamp.Time
	}
	if asked.IsZero() {
		asked = d.now
	}
	return asked.Add(d.t.savepointTimeout)
}

// firstPath is the initialSavepointPath of the first job, re-applied: the
// template's, or the record's it started from.
func (d *decider) firstPath() string {
	if p := d.templateSavepointPath(); p != "" {
		return p
	}
	if r := d.current(); r != nil && r.Kind == v1alpha1.RolloutFirst && r.Record != "" && d.stateful() {
		return r.RestoredFrom
	}
	return ""
}

// DeletionOverdue reports a deletion of p whose decisions had the
// savepoint timeout and one reschedule interval to run, and still fail:
// the adapter then lets the deletion complete (removes the finalizer) and
// leaves the children to the garbage collector, rather than hold the
// object for ever. The time counts from the later of the deletion and the
// final savepoint's request, or, before one is recorded, the moment the
// adapter first saw the deletion (a deletion seen late, the controller
// being down, has its whole deadline).
func DeletionOverdue(p *v1alpha1.FlinkBlueGreenDeployment, seen, now time.Time) bool {
	if p.DeletionTimestamp.IsZero() {
		return false
	}
	t, err := parseTimers(p.Spec.Configuration)
	if err != nil {
		t, _ = parseTimers(nil)
	}
	start := p.DeletionTimestamp.Time
	if sp := p.Status.Savepoint; sp != nil && sp.Name == FinalSnapshotName(p) && sp.TriggerTimestamp != nil {
		// Asked: the request proves when it was seen (a replica that
		// started since sees it late, and moves nothing).
		if sp.TriggerTimestamp.After(start) {
			start = sp.TriggerTimestamp.Time
		}
	} else if seen.After(start) {
		start = seen
	}
	return !now.Before(start.Add(t.savepointTimeout + t.interval))
}
