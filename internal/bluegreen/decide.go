/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// decide.go: Decide, the entry point of the state machine, and the decider
// it builds a Decision with — request annotations, child actions, events,
// requeue and status timestamps.

package bluegreen

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// decider carries one Decide call: the input, the status being built and
// the decision's actions, events and requeue.
type decider struct {
	in    Input
	p     *v1alpha1.FlinkBlueGreenDeployment
	spec  *v1alpha1.FlinkBlueGreenDeploymentSpec
	last  *v1alpha1.FlinkBlueGreenDeploymentSpec // parsed lastReconciledSpec, nil if none
	t     timers
	now   time.Time
	st    v1alpha1.FlinkBlueGreenDeploymentStatus
	out   Decision
	phase phase
}

// phase explains a state that is still in progress, for the conditions.
type phase struct {
	progressing bool
	reason      string
	message     string
}

// Decide computes the next status of a FlinkBlueGreenDeployment and the
// actions that lead there. It returns an error only for a spec that can
// never work (template without job, unparsable durations); the adapter
// then marks the object Stalled and leaves the children alone.
func Decide(in Input) (Decision, error) {
	d, err := newDecider(in)
	if err != nil {
		return Decision{}, err
	}
	switch {
	case !in.Parent.DeletionTimestamp.IsZero():
		d.finalizing()
	case d.foreign() != nil:
		d.waitForeign(d.foreign())
	case d.refused() != nil:
		d.refuseAdoption(d.refusedChild())
	case d.unowned() != nil:
		d.claimUnowned()
	case in.Rejection != nil:
		d.rejected(in.Rejection)
	default:
		d.dispatch()
	}
	d.st.ActiveJobState = d.activeJobState()
	d.summarize()
	d.out.Status = d.st
	if reflect.DeepEqual(d.st, in.Parent.Status) {
		// Events report state changes; an unchanged status has none.
		d.out.Events = nil
	}
	return d.out, nil
}

func newDecider(in Input) (*decider, error) {
	if in.Parent == nil {
		return nil, errors.New("no FlinkBlueGreenDeployment")
	}
	if in.Parent.Spec.Template.Spec.Job == nil {
		return nil, errors.New("spec.template.spec.job is required: FlinkBlueGreenDeployment runs application-mode jobs only")
	}
	t, err := parseTimers(in.Parent.Spec.Configuration)
	if err != nil && in.Parent.DeletionTimestamp.IsZero() {
		return nil, err
	}
	if err != nil {
		t, _ = parseTimers(nil) // a deletion still savepoints, on the defaults
	}
	d := &decider{in: in, p: in.Parent, spec: &in.Parent.Spec, t: t, now: in.Now}
	d.st = *in.Parent.Status.DeepCopy()
	d.st.ObservedGeneration = in.Parent.Generation
	d.last = parseLastSpec(d.st.LastReconciledSpec)
	return d, nil
}

func (d *decider) dispatch() {
	switch d.st.BlueGreenState {
	case v1alpha1.ActiveBlue:
		d.active(Blue)
	case v1alpha1.ActiveGreen:
		d.active(Green)
	case v1alpha1.SavepointingBlue:
		d.savepointing(Blue)
	case v1alpha1.SavepointingGreen:
		d.savepointing(Green)
	case v1alpha1.TransitioningToBlue:
		d.transitioning(Blue)
	case v1alpha1.TransitioningToGreen:
		d.transitioning(Green)
	default:
		d.initializing()
	}
}

// lastSpecJSON is the FLIP-503 format of lastReconciledSpec.
type lastSpecJSON struct {
	Spec v1alpha1.FlinkBlueGreenDeploymentSpec `json:"spec"`
}

func parseLastSpec(s string) *v1alpha1.FlinkBlueGreenDeploymentSpec {
	if s == "" {
		return nil
	}
	var l lastSpecJSON
	if err := json.Unmarshal([]byte(s), &l); err != nil || l.Spec.Template.Spec.Job == nil {
		return nil
	}
	return &l.Spec
}

// stamp records the current spec as handled.
func (d *decider) stamp() {
	b, err := json.Marshal(lastSpecJSON{Spec: *d.spec})
	if err != nil {
		return
	}
	if d.st.LastReconciledSpec != string(b) {
		d.st.LastReconciledSpec = string(b)
		d.st.LastReconciledTimestamp = d.ts(d.now)
	}
	d.last = d.spec.DeepCopy()
}

// specPending reports a spec change not yet handled.
func (d *decider) specPending() bool {
	return d.last == nil || Classify(d.last, d.spec).Type != DiffIgnore
}

// Request annotations: a value differing from the acknowledged one is new.
func (d *decider) annotation(key string) string { return d.p.Annotations[key] }

func (d *decider) revision() string { return d.annotation(v1alpha1.RevisionAnnotation) }

func (d *decider) retryRequested() bool {
	v := d.annotation(v1alpha1.RetryRequestedAtAnnotation)
	return v != "" && v != d.st.LastHandledRetryAt
}

func (d *decider) abortRequested() bool {
	v := d.annotation(v1alpha1.AbortRequestedAtAnnotation)
	return v != "" && v != d.st.LastHandledAbortAt
}

func (d *decider) promoteRequested() bool {
	v := d.annotation(v1alpha1.PromoteRequestedAtAnnotation)
	return v != "" && v != d.st.LastHandledPromoteAt
}

func (d *decider) ackRetry() {
	if d.retryRequested() {
		d.st.LastHandledRetryAt = d.annotation(v1alpha1.RetryRequestedAtAnnotation)
	}
}

func (d *decider) ackAbort() {
	d.st.LastHandledAbortAt = d.annotation(v1alpha1.AbortRequestedAtAnnotation)
}

func (d *decider) ackPromote() {
	d.st.LastHandledPromoteAt = d.annotation(v1alpha1.PromoteRequestedAtAnnotation)
}

// ignoreRetry acknowledges a retry requested while a transition is in
// progress: it has nothing to retry yet, and must not restart the
// transition once this one has ended.
func (d *decider) ignoreRetry() {
	if d.retryRequested() {
		d.ackRetry()
		d.event(false, "RetryIgnored", "retry requested while a transition is in progress; it has nothing to retry")
	}
}

// ackIdleRequests acknowledges promote and abort requests made while no
// transition is in progress, so that they do not act on a later one.
func (d *decider) ackIdleRequests() {
	if d.promoteRequested() {
		d.ackPromote()
		d.event(false, "PromoteIgnored", "promotion requested but no transition is waiting for it")
	}
	if d.abortRequested() {
		d.ackAbort()
		d.event(false, "AbortIgnored", "abort requested but no transition is in progress")
	}
}

func (d *decider) child(c Color) *Child {
	if c == Blue {
		return d.in.Blue
	}
	return d.in.Green
}

func (d *decider) childName(c Color) string { return ChildName(d.p.Name, c) }

func (d *decider) templateSavepointPath() string {
	return d.spec.Template.Spec.Job.InitialSavepointPath
}

// desiredChild is template.spec with the given initialSavepointPath and
// the colour's ingress (see ChildIngress).
func (d *decider) desiredChild(c Color, savepointPath string) *ChildSpec {
	spec := *d.spec.Template.Spec.DeepCopy()
	spec.Job.InitialSavepointPath = savepointPath
	spec.Ingress = ChildIngress(spec.Ingress, c)
	return &ChildSpec{Name: d.childName(c), Color: c, Spec: spec, Revision: d.revision()}
}

func (d *decider) apply(cs *ChildSpec) {
	d.out.Actions = append(d.out.Actions, Action{Type: ApplyChild, Child: cs})
}

func (d *decider) deleteChild(c Color) {
	d.out.Actions = append(d.out.Actions, Action{Type: DeleteChild, ChildName: d.childName(c)})
}

// suspendChild asks the Flink operator to stop the child's job, keeping
// the child (FLIP-503 keeps an aborted colour, suspended).
func (d *decider) suspendChild(c *Child) {
	if c == nil || c.Deleting || c.suspendedSpec() {
		return
	}
	spec := *c.Spec.DeepCopy()
	if spec.Job == nil {
		spec.Job = &v1alpha1.JobSpec{}
	}
	spec.Job.State = v1alpha1.JobStateSuspended
	d.apply(&ChildSpec{Name: c.Name, Color: c.Color, Spec: spec, Revision: c.Revision})
}

// deleting reports whether this decision deletes the child named name.
func (d *decider) deleting(name string) bool {
	return d.acts(func(a Action) bool { return a.Type == DeleteChild && a.ChildName == name })
}

// suspending reports whether this decision suspends the child named name
// (an abort that a revert in the same reconcile follows).
func (d *decider) suspending(name string) bool {
	return d.acts(func(a Action) bool { return a.Type == ApplyChild && a.Child.Name == name && a.Child.Spec.Suspended() })
}

// acts reports whether one of this decision's actions matches.
func (d *decider) acts(match func(Action) bool) bool {
	return slices.ContainsFunc(d.out.Actions, match)
}

// baseOf is the parent spec the child runs: the current spec with
// template.spec replaced by the child's, the template's
// initialSavepointPath (see withSavepointPath), and the ingress without
// the colour's prefix, which desiredChild added and no spec change asks.
// Fields another field manager overrode read as Git last set them (the
// last reconciled spec), so a commit that changes one still rolls out.
func (d *decider) baseOf(c *Child) *v1alpha1.FlinkBlueGreenDeploymentSpec {
	return BaseOf(d.spec, d.last, c)
}

// BaseOf is the parent spec child c runs, judged against spec (the
// parent's spec now) and last (the parsed last reconciled spec, nil if
// none): the rule the controller rolls a change out by, and the PR plan
// predicts it with.
func BaseOf(spec, last *v1alpha1.FlinkBlueGreenDeploymentSpec, c *Child) *v1alpha1.FlinkBlueGreenDeploymentSpec {
	base := spec.DeepCopy()
	base.Template.Spec = *c.Spec.DeepCopy()
	if len(c.Overridden) > 0 {
		set := spec
		if last != nil {
			set = last
		}
		base.Template.Spec = gitSet(&c.Spec, &set.Template.Spec, c.Overridden)
	}
	base.Template.Spec.Ingress = childTemplateIngress(c.Spec.Ingress, spec.Template.Spec.Ingress, c.Color)
	return withSavepointPath(base, spec)
}

// ParseLastSpec parses status.lastReconciledSpec; nil if none or unreadable.
func ParseLastSpec(s string) *v1alpha1.FlinkBlueGreenDeploymentSpec { return parseLastSpec(s) }

func (d *decider) stateful() bool { return d.spec.Template.Spec.Stateful() }

func (d *decider) requeue(after time.Duration) {
	if after <= 0 {
		after = time.Second
	}
	if d.out.RequeueAfter == 0 || after < d.out.RequeueAfter {
		d.out.RequeueAfter = after
	}
}

// until is the time left before t, polled at least every interval.
func (d *decider) until(t *metav1.Time) time.Duration {
	left := t.Sub(d.now)
	if left > d.t.interval {
		return d.t.interval
	}
	return left
}

func (d *decider) event(warning bool, reason, format string, args ...any) {
	d.out.Events = append(d.out.Events, Event{Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func (d *decider) progressing(reason, format string, args ...any) {
	d.phase = phase{progressing: true, reason: reason, message: fmt.Sprintf(format, args...)}
}

// ts is a status timestamp; the API server keeps seconds only.
func (d *decider) ts(t time.Time) *metav1.Time {
	m := metav1.NewTime(t.Truncate(time.Second))
	return &m
}

// deadline is a status timestamp of an instant that must not come early
// (an abort deadline, the start of a deletion delay): rounded up to the
// second the API server keeps, so a timer never runs shorter than asked.
func (d *decider) deadline(t time.Time) *metav1.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	m := metav1.NewTime(t)
	return &m
}

// armDeadline starts the abort grace period of a transition.
func (d *decider) armDeadline() {
	d.st.AbortTimestamp = d.deadline(d.now.Add(d.t.grace))
}

func (d *decider) setJob(s v1alpha1.JobState, errMsg string) {
	d.st.JobStatus.State = s
	d.st.Error = errMsg
}

func (d *decider) fail(msg string) { d.setJob(v1alpha1.JobFailing, msg) }

func (d *decider) resetMarkers() {
	d.st.AbortTimestamp = nil
	d.st.DeploymentReadyTimestamp = nil
}

func (d *decider) cmd(verb string) string {
	ns := ""
	if d.p.Namespace != "" {
		ns = " -n " + d.p.Namespace
	}
	return fmt.Sprintf("`bg-gitops %s fbgd %s%s`", verb, d.p.Name, ns)
}

func revOr(rev string) string {
	if rev == "" {
		return "unknown revision"
	}
	return strings.TrimSpace(rev)
}
