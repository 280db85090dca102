/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

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

// path is the savepoint a job starts from when it restores r: its own,
// or, when that never completed, the last one known before it ("" none).
func (r *Record) path() string {
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
	if StartsEmptyOnPurpose(d.p) {
		return firstStart{empty: true, reason: "StartedEmpty",
			msg: "the first job starts with empty state, as " + v1alpha1.InitialStateAnnotation + ": empty asks"}, true
	}
	of, r := RecordOf(d.p), d.in.Record
	switch {
	case r == nil && of != d.p.Name:
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
	path := r.path()
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
// active), the holder's job, when stateful and running, is savepointed
// into a record, bounded by the savepoint timeout counted from the
// deletion; then the children are deleted and the finalizer goes.
func (d *decider) finalizing() {
	d.end(v1alpha1.RolloutAborted, "the FlinkBlueGreenDeployment is being deleted")
	h := d.stateHolder()
	if h != nil && d.st.BlueGreenState.InProgress() {
		// The transition is over: the holder is the active colour.
		d.st.BlueGreenState, d.st.ActiveDeployment = activeState(h.Color), h.Name
		d.resetMarkers()
	}
	if rej := d.in.Rejection; rej != nil && rej.Action.Type == DeleteChild {
		d.event(true, "ChildDeletionRefused", "%s; the garbage collector deletes the children it owns", rej.cause("the API server refused to delete FlinkDeployment ", rej.Action.ChildName))
		d.out.Finalize = true
		return
	}
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		// The other colour first: it holds no state the record needs.
		if c != nil && !c.Deleting && c != h {
			d.deleteChild(c.Color)
		}
	}
	if h != nil && d.awaitsFinalSavepoint(h) {
		return
	}
	if h != nil {
		d.deleteChild(h.Color)
	}
	d.progressing("Deleting", "deleting the children of %s", d.p.Name)
	d.out.Finalize = true
}

// stateHolder is the child whose job holds the state: the active colour,
// also during a transition; nil when none is left.
func (d *decider) stateHolder() *Child {
	s := d.st.BlueGreenState
	var c Color
	switch {
	case s.Active() || s.Savepointing():
		c = stateColour(s)
	case s.Transitioning():
		c = stateColour(s).Other()
		if oc := d.child(c); oc == nil || oc.Deleting {
			c = c.Other()
		}
	default:
		return d.adoptee()
	}
	if ch := d.child(c); ch != nil && !ch.Deleting {
		return ch
	}
	return nil
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
// job; false once there is nothing (more) to wait for.
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
	deadline := d.deletionDeadline()
	switch {
	case d.in.Rejection != nil:
		d.event(true, "FinalSavepointRefused", "%s; the children are deleted without a final savepoint",
			d.in.Rejection.cause("the API server refused the final savepoint ", name))
	case snap != nil && snap.State == SnapshotCompleted:
		d.st.Savepoint.Path = snap.Path
		d.event(false, "FinalSavepointCompleted", "final savepoint %s of %s kept as FlinkStateSnapshot %s: a FlinkBlueGreenDeployment named %s created later starts from it",
			snap.Path, h.Name, name, d.p.Name)
	case snap != nil && (snap.State == SnapshotFailed || snap.State == SnapshotAbandoned):
		d.event(true, "FinalSavepointFailed", "final savepoint %s of %s %s (%s): the children are deleted; a FlinkBlueGreenDeployment named %s created later starts from the last completed savepoint, %s",
			name, h.Name, strings.ToLower(snap.State), orDash(snap.Error), d.p.Name, orDash(d.lastCompleted(h)))
	case !d.now.Before(deadline):
		d.event(true, "FinalSavepointTimedOut", "final savepoint %s of %s did not complete within %s of the deletion: the children are deleted; a FlinkBlueGreenDeployment named %s created later starts from the last completed savepoint, %s",
			name, h.Name, d.t.savepointTimeout, d.p.Name, orDash(d.lastCompleted(h)))
	case asked || snap != nil:
		if snap == nil {
			d.askFinalSavepoint(h, name, "") // not in the cache yet, or deleted: AlreadyExists is fine
		}
		d.progressing("FinalSavepoint", "taking the final savepoint %s of %s before deletion", name, h.Name)
		d.requeue(min(d.t.interval, deadline.Sub(d.now)))
		return true
	case !h.Ready():
		if lc := d.lastCompleted(h); lc != "" {
			d.askFinalSavepoint(h, name, lc)
			d.st.Savepoint.Path = lc
			d.event(false, "StateRecorded", "%s does not run (%s): its last savepoint %s is kept as FlinkStateSnapshot %s for a FlinkBlueGreenDeployment named %s created later",
				h.Name, h.describe(), lc, name, d.p.Name)
		}
	default:
		d.askFinalSavepoint(h, name, "")
		d.progressing("FinalSavepoint", "taking the final savepoint %s of %s before deletion", name, h.Name)
		d.event(false, "FinalSavepointStarted", "deleted: taking the final savepoint %s of %s (job %s) before its children go",
			name, h.Name, orDash(h.JobID))
		d.requeue(min(d.t.interval, deadline.Sub(d.now)))
		return true
	}
	return false
}

// askFinalSavepoint creates the record of h's job: a savepoint, or, with
// existing set, that savepoint recorded as it is.
func (d *decider) askFinalSavepoint(h *Child, name, existing string) {
	format, _ := savepointFormat(&h.Spec) // the running job's: a bad value only leaves the default
	d.createSnapshot(&SnapshotSpec{Name: name, JobName: h.Name, FormatType: format, Revision: h.Revision,
		Record: &RecordSpec{JobID: h.JobID, LastCompleted: d.lastCompleted(h), Existing: existing}})
	if d.st.Savepoint == nil || d.st.Savepoint.Name != name {
		d.st.Savepoint = &v1alpha1.SavepointStatus{Name: name, TriggerTimestamp: d.ts(d.now)}
	}
}

// lastCompleted is the last savepoint of h's job known to have completed:
// the one a transition in progress took of it, the one the Flink operator
// took when it last upgraded or suspended it, or the one it started from.
func (d *decider) lastCompleted(h *Child) string {
	if sp := d.st.Savepoint; sp != nil && sp.Path != "" && sp.Name != FinalSnapshotName(d.p) && d.in.Parent.Status.BlueGreenState.InProgress() {
		return sp.Path
	}
	if h.UpgradeSavepointPath != "" {
		return h.UpgradeSavepointPath
	}
	return ownPath(h)
}

// deletionDeadline is when a deletion stops waiting for its final
// savepoint.
func (d *decider) deletionDeadline() time.Time {
	return d.p.DeletionTimestamp.Add(d.t.savepointTimeout)
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
