/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// savepoint.go: the SAVEPOINTING_<colour> state — asking the Flink operator
// for a savepoint of the running colour, waiting for it, taking a fresh one
// when it aged, and ending the attempt when it fails or comes too late.

package bluegreen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startSavepoint requests a savepoint of the active job (SAVEPOINTING_X).
// Unlike FLIP-503 the spec is stamped here, so a failed savepoint is not
// retried in a loop.
func (d *decider) startSavepoint(x Color, a *Child) {
	name := d.snapshotName(a)
	snap, err := d.snapshotOf(name, a)
	if err != nil {
		d.savepointRefused(x, err)
		return
	}
	d.begin(d.blueGreenFrom(x, name))
	d.createSnapshot(snap)
	d.stamp()
	d.st.BlueGreenState = savepointingState(x)
	d.st.TargetRevision = d.revision()
	d.st.TransitionStartTime = d.ts(d.now)
	d.st.Savepoint = &v1alpha1.SavepointStatus{Name: name, TriggerTimestamp: d.deadline(d.now)}
	d.resetMarkers()
	d.setJob(v1alpha1.JobReconciling, "")
	d.progressing("Savepointing", "taking savepoint %s of %s", name, a.Name)
	d.event(false, "SavepointStarted", "taking savepoint %s of %s (job %s) to roll out %s", name, a.Name, orDash(a.JobID), revOr(d.revision()))
	d.requeue(min(d.t.interval, d.t.savepointTimeout, d.t.snapshotPickup))
}

func (d *decider) createSnapshot(s *SnapshotSpec) {
	d.out.Actions = append(d.out.Actions, Action{Type: CreateSnapshot, Snapshot: s})
}

// SavepointFormatKey is the flinkConfiguration key of the format the Flink
// operator takes savepoints in (KubernetesOperatorConfigOptions).
const SavepointFormatKey = "kubernetes.operator.savepoint.format.type"

// snapshotOf is the request for savepoint name of a's job.
func (d *decider) snapshotOf(name string, a *Child) (*SnapshotSpec, error) {
	format, err := savepointFormat(&d.spec.Template.Spec)
	if err != nil {
		return nil, err
	}
	return &SnapshotSpec{Name: name, JobName: a.Name, FormatType: format, Revision: d.revision(), JobRevision: a.Revision}, nil
}

// savepointFormat is the format the template asks savepoints in. The
// Flink operator uses the running job's setting for its own savepoints,
// but this one exists to start the template's job, and only the template
// knows what that job can restore (after a change of state backend, only
// CANONICAL). The two differ only when the commit rolled out changes the
// key along with a transition; a bad value is then fixed by the next
// commit. Flink reads the value case-insensitively; unset or empty leaves
// the operator's default. Any other value is refused here, naming the
// key: the CRD's enum would reject most, naming only formatType, and
// would accept UNKNOWN, which is no format Flink writes.
func savepointFormat(spec *v1alpha1.FlinkDeploymentSpec) (string, error) {
	raw, _ := FlinkConfigValue(spec, SavepointFormatKey)
	switch v := strings.ToUpper(strings.TrimSpace(raw)); v {
	case "", "CANONICAL", "NATIVE":
		return v, nil
	}
	return "", fmt.Errorf("spec.template.spec.flinkConfiguration %s is %q, not CANONICAL or NATIVE", SavepointFormatKey, raw)
}

// savepointRefused: the savepoint cannot be asked for. Like a request the
// API server rejects (see rejected), the spec is handled and X untouched.
func (d *decider) savepointRefused(x Color, err error) {
	d.beginUnlessUnderWay(d.blueGreenFrom(x, ""))
	d.stamp()
	d.st.TargetRevision = d.revision()
	d.savepointFailed(x, "SavepointRefused", err.Error())
}

// snapshotName is a pure function of the inputs that start the savepoint
// (target spec, generation, the active job, the retry request), so that a
// crash between creating the snapshot and writing status re-issues the
// same name, while a new commit or a retry gets a fresh one.
func (d *decider) snapshotName(a *Child, replaces ...string) string {
	spec, _ := json.Marshal(d.spec.Template.Spec)
	h := sha256.New()
	for _, part := range append([]string{string(spec), strconv.FormatInt(d.p.Generation, 10), a.Name, a.JobID,
		d.annotation(v1alpha1.RetryRequestedAtAnnotation)}, replaces...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	sum := hex.EncodeToString(h.Sum(nil))[:10]
	return dnsPrefix(d.p.Name, 63-len("-sp-")-len(sum)) + "-sp-" + sum
}

// dnsPrefix shortens a name to max characters of a DNS-1123 label.
func dnsPrefix(name string, max int) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	s := strings.Trim(string(b), "-")
	if s == "" {
		return "fbgd"
	}
	return s
}

// savepointing handles SAVEPOINTING_X: wait for the snapshot, then start
// the new colour from it; a failed, abandoned or late snapshot ends the
// attempt with X untouched.
func (d *decider) savepointing(x Color) {
	a, sp := d.child(x), d.st.Savepoint
	d.ignoreRetry()
	switch {
	case d.abortRequested():
		d.ackAbort()
		d.savepointFailed(x, "Aborted", "aborted by request while taking the savepoint")
		return
	case a == nil || a.Deleting:
		d.savepointFailed(x, "SavepointFailed", "active FlinkDeployment "+d.childName(x)+" disappeared while taking the savepoint")
		return
	case sp == nil || sp.Name == "":
		d.savepointFailed(x, "SavepointFailed", "the savepoint record in status.savepoint was lost")
		return
	}
	snap := d.in.Snapshot
	if snap != nil && snap.Name != sp.Name {
		snap = nil
	}
	d.savepointProgress(x, a, sp, snap)
}

func (d *decider) savepointProgress(x Color, a *Child, sp *v1alpha1.SavepointStatus, snap *Snapshot) {
	deadline := sp.TriggerTimestamp
	if deadline == nil {
		deadline = d.deadline(d.now)
	}
	deadline = d.deadline(deadline.Add(d.t.savepointTimeout))
	switch {
	case snap != nil && snap.Foreign != "":
		d.savepointFailed(x, "SnapshotNotOurs", fmt.Sprintf("FlinkStateSnapshot %s was not created by bg-gitops for %s (%s), "+
			"and a new colour starts only from a savepoint bg-gitops asked for (a retry asks under another name)", sp.Name, d.p.Name, snap.Foreign))
	case snap != nil && snap.State == SnapshotCompleted:
		d.savepointDone(x, a, snap, deadline)
	case snap != nil && (snap.State == SnapshotFailed || snap.State == SnapshotAbandoned):
		d.savepointFailed(x, "SavepointFailed", fmt.Sprintf("savepoint %s of %s %s: %s", sp.Name, a.Name, strings.ToLower(snap.State), orDash(snap.Error)))
	case !d.now.Before(deadline.Time):
		d.savepointFailed(x, "SavepointFailed", fmt.Sprintf("savepoint %s of %s did not complete within %s (%s)",
			sp.Name, a.Name, d.t.savepointTimeout, v1alpha1.SavepointTimeoutKey))
	case d.notPickedUp(snap, a, sp):
		d.savepointFailed(x, "SnapshotNotPickedUp", fmt.Sprintf("FlinkStateSnapshot %s has no status %s after it was created (%s) "+
			"while %s runs: the Flink operator's snapshot controller is off (%s: false in the operator's configuration), "+
			"or the operator is down", sp.Name, d.t.snapshotPickup, v1alpha1.SnapshotPickupTimeoutKey, a.Name, SnapshotResourceEnabledKey))
	default:
		if snap == nil && !d.reissue(x, a, sp.Name) {
			return
		}
		d.progressing("Savepointing", "taking savepoint %s of %s", sp.Name, a.Name)
		d.requeue(d.until(deadline))
		if snap != nil && snap.State == "" {
			d.requeue(d.until(d.deadline(d.askedAt(snap, sp).Add(d.t.snapshotPickup))))
		}
	}
}

// SnapshotResourceEnabledKey is the Flink operator's option that registers
// its FlinkStateSnapshot controller (KubernetesOperatorConfigOptions
// SNAPSHOT_RESOURCE_ENABLED, default true).
const SnapshotResourceEnabledKey = "kubernetes.operator.snapshot.resource.enabled"

// notPickedUp reports a snapshot the Flink operator never picked up: no
// status at all the snapshot pickup timeout after it was asked for, while
// the job it is of runs as the operator last reported (the operator
// works, or did).
//
// Why no status: with kubernetes.operator.snapshot.resource.enabled false
// in the operator's own configuration, FlinkOperator.
// registerSnapshotController registers no FlinkStateSnapshot controller at
// all (the operator also turns it off when the FlinkStateSnapshot CRD was
// missing at its start). Nothing then reconciles a FlinkStateSnapshot: it
// gets no status, no finalizer, no event, while the FlinkDeployments are
// reconciled as before (their own savepoints go to the deprecated
// status.jobStatus.savepointInfo). When the controller runs, its first
// reconcile of a new snapshot (FlinkStateSnapshotController.reconcile)
// writes a status, TRIGGER_PENDING by default, within moments. Waiting the whole savepoint timeout for
// a snapshot that will never be taken tells the user nothing; this names
// the setting. An operator that is down entirely looks the same from
// here; the message says so.
func (d *decider) notPickedUp(snap *Snapshot, a *Child, sp *v1alpha1.SavepointStatus) bool {
	if snap == nil || snap.State != "" || !a.Ready() {
		return false
	}
	return !d.now.Before(d.askedAt(snap, sp).Add(d.t.snapshotPickup))
}

// askedAt is when the snapshot was asked for: its creation, else the
// trigger timestamp of the status.
func (d *decider) askedAt(snap *Snapshot, sp *v1alpha1.SavepointStatus) time.Time {
	if !snap.Created.IsZero() {
		return snap.Created
	}
	if sp.TriggerTimestamp != nil {
		return sp.TriggerTimestamp.Time
	}
	return d.now
}

// reissue asks again for a snapshot not seen yet (the cache), deleted, or
// never created (the decision asking for it is written first, see
// StatusFirst). false: the attempt failed, as a new spec asks for an
// invalid format.
func (d *decider) reissue(x Color, a *Child, name string) bool {
	snap, err := d.snapshotOf(name, a)
	if err != nil {
		d.savepointRefused(x, err)
		return false
	}
	d.createSnapshot(snap)
	return true
}

func (d *decider) savepointDone(x Color, a *Child, snap *Snapshot, deadline *metav1.Time) {
	path := strings.TrimPrefix(snap.Path, "file:")
	if path == "" {
		d.savepointFailed(x, "SavepointFailed", "savepoint "+snap.Name+" completed without a path")
		return
	}
	d.st.Savepoint.Path = path
	d.record(func(r *v1alpha1.RolloutRecord) { r.SavepointPath = path })
	diff := Classify(d.baseOf(a), d.spec)
	b := d.child(x.Other())
	if b != nil && !d.startedFor(b, path) {
		d.waitForOther(x, b, deadline)
		return
	}
	if b == nil && diff.Type == DiffTransition && d.aged(snap, deadline) {
		d.agedSavepoint(x, a, snap.Name)
		return
	}
	if d.closedToNewColour(a) {
		d.closedBeforeStart(x, a)
		return
	}
	switch diff.Type {
	case DiffTransition:
		d.startNewColour(x.Other(), path, diff)
	case DiffSavepointRedeploy:
		d.startNewColour(x.Other(), d.templateSavepointPath(), diff)
	default:
		// The spec changed while savepointing and needs no new colour now.
		d.end(v1alpha1.RolloutSuperseded, "superseded by "+revOr(d.revision())+", which needs no new colour: "+
			"the spec changed while the savepoint was taken")
		d.st.BlueGreenState = activeState(x)
		d.settle(a)
		d.active(x)
	}
}

// aged reports a completed savepoint older than the savepoint timeout:
// asked for before the deadline of the status, or, named the same, before
// (a wiped status asked for it again).
func (d *decider) aged(snap *Snapshot, deadline *metav1.Time) bool {
	return !d.now.Before(deadline.Time) || !snap.Created.IsZero() && !d.now.Before(snap.Created.Add(d.t.savepointTimeout))
}

// agedSavepoint: the savepoint completed, but the new colour would start
// from it after the savepoint timeout. A fresh one is taken, once: when
// the fresh one ages too, the rollout fails (the new colour cannot be
// started in time, whatever holds it up).
func (d *decider) agedSavepoint(x Color, a *Child, name string) {
	if name != d.freshName(a) {
		d.refreshSavepoint(x, a, name)
		return
	}
	d.savepointFailed(x, "SavepointFailed", fmt.Sprintf("%s could not be started from savepoint %s within %s (%s), twice",
		d.childName(x.Other()), name, d.t.savepointTimeout, v1alpha1.SavepointTimeoutKey))
}

// freshName is the name of the one fresh savepoint of a's job a rollout
// of this spec may take after its first aged (see snapshotName): a lost
// status write asks for the same one again, and one that ages too is not
// replaced.
func (d *decider) freshName(a *Child) string { return d.snapshotName(a, "fresh") }

// closedBeforeStart: the spec changed after the rollout window closed,
// while the savepoint was taken. No new colour starts for a commit that
// landed outside the window: the rollout under way ends superseded before
// it started one, X stays active, and the commit waits for the window.
func (d *decider) closedBeforeStart(x Color, a *Child) {
	d.end(v1alpha1.RolloutSuperseded, d.closedMessage())
	d.st.BlueGreenState = activeState(x)
	d.settle(a)
	d.active(x)
}

// refreshSavepoint: the savepoint completed, but the new colour would
// start from it after the savepoint timeout (the controller was down or
// could not act): the source may no longer hold the records since. A
// fresh savepoint of X is taken instead (freshName).
func (d *decider) refreshSavepoint(x Color, a *Child, old string) {
	name := d.freshName(a)
	snap, err := d.snapshotOf(name, a)
	if err != nil {
		d.savepointRefused(x, err)
		return
	}
	d.createSnapshot(snap)
	d.st.Savepoint = &v1alpha1.SavepointStatus{Name: name, TriggerTimestamp: d.deadline(d.now)}
	d.record(func(r *v1alpha1.RolloutRecord) { r.SavepointName, r.SavepointPath = name, "" })
	d.progressing("Savepointing", "taking savepoint %s of %s", name, a.Name)
	d.event(false, "SavepointRefreshed", "savepoint %s of %s completed more than %s before %s could start: taking a fresh one, %s",
		old, a.Name, d.t.savepointTimeout, d.childName(x.Other()), name)
	d.requeue(min(d.t.interval, d.t.savepointTimeout, d.t.snapshotPickup))
}

// startedFor reports whether c is a new colour this savepoint already
// started for the current spec (the status write after it was lost). One
// started for an earlier spec is deleted and deployed again: the Flink
// operator would upgrade it from its own state, not from the savepoint.
func (d *decider) startedFor(c *Child, path string) bool {
	return startedFrom(c, path) && Classify(d.baseOf(c), d.spec).Type == DiffIgnore
}

// startedFrom reports whether c was started from the savepoint at path.
func startedFrom(c *Child, path string) bool {
	return !c.Deleting && !c.suspendedSpec() && c.Spec.Job != nil && c.Spec.Job.InitialSavepointPath == path
}

// waitForOther: the new colour's name is still taken (a leftover being
// deleted, or a child that appeared while savepointing). It waits, within
// the savepoint timeout, for the name to be free.
func (d *decider) waitForOther(x Color, b *Child, deadline *metav1.Time) {
	if !b.Deleting {
		d.deleteChild(b.Color)
	}
	if !d.now.Before(deadline.Time) {
		d.savepointFailed(x, "SavepointFailed", "FlinkDeployment "+b.Name+" was not deleted within "+d.t.savepointTimeout.String())
		return
	}
	d.progressing("WaitingForDeletion", "savepoint done; waiting for FlinkDeployment %s to be deleted", b.Name)
	d.requeue(d.until(deadline))
}

// savepointFailed returns to ACTIVE_X with FAILING; X was never touched.
func (d *decider) savepointFailed(x Color, reason, cause string) {
	msg := "transition not started: " + cause + "; " + d.childName(x) + " keeps running. Push a new commit or run " +
		d.cmd("retry") + " to try again"
	d.st.BlueGreenState = activeState(x)
	d.resetMarkers()
	d.fail(msg)
	d.event(true, reason, "%s", msg)
	outcome := v1alpha1.RolloutFailed
	if reason == "Aborted" {
		outcome = v1alpha1.RolloutAborted
	}
	d.end(outcome, msg)
	d.active(x)
}

// blueGreenFrom is the history entry of a blue/green transition from X,
// with the savepoint it takes (none: "").
func (d *decider) blueGreenFrom(x Color, savepoint string) v1alpha1.RolloutRecord {
	return v1alpha1.RolloutRecord{Kind: v1alpha1.RolloutBlueGreen, From: d.childName(x), To: d.childName(x.Other()),
		SavepointName: savepoint}
}
