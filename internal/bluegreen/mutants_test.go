/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Behaviour that mutation testing (make mutate, docs/mutation.md) found no
// other test pinned down: each test states one fact a user can observe.

// In Manual mode a person ends the transition, so a ready green that stops
// being ready while it waits for promotion gets a fresh grace period: it is
// not aborted at once for a deadline that passed while it was waiting.
func TestReadyTargetThatStopsBeingReadyRearmsTheAbortDeadline(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	manual(w)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.advance(time.Hour) // the deadline armed at the start has long passed
	w.expectNoop(w.step())
	w.failChild(Green)
	w.step()
	w.expectState(sToGreen, jReconciling)
	if want := w.now.Add(10 * time.Minute); !w.status().AbortTimestamp.Time.Equal(want) {
		w.fatalf("abort deadline %v, want a fresh grace period until %v", w.status().AbortTimestamp, want)
	}
	w.advance(10*time.Minute - time.Second)
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.advance(time.Second)
	w.step()
	w.expectState(sActiveBlue, jFailing)

	// In Automatic mode the deadline is kept: a flapping job cannot hold the
	// transition open.
	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "1 h")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	deadline := w.status().AbortTimestamp.DeepCopy()
	w.ready(Green)
	w.step()
	w.advance(time.Minute)
	w.failChild(Green)
	w.step()
	if !w.status().AbortTimestamp.Equal(deadline) {
		w.fatalf("abort deadline moved to %v, want it kept at %v", w.status().AbortTimestamp, deadline)
	}
}

// A savepoint that completes after the spec went back to what the active
// job runs starts no new colour: the active colour is left as it is.
func TestSavepointCompletingAfterTheChangeWasRevertedStartsNoTransition(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.expectState(sSpBlue, jReconciling)
	newImage(w, "flink:1.20", "main@sha1:r3") // reverted
	w.completeSnapshot()
	d := w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectChildren(Blue)
	if len(d.Actions) != 0 {
		w.fatalf("want nothing done, got %s", describeActions(d.Actions))
	}
	if st := w.status(); st.ActiveDeployment != "orders-blue" || st.Error != "" {
		w.fatalf("status %+v", st)
	}
	w.expectNoop(w.step())
}

// A savepoint that completes after the spec changed to an in-place change
// patches the active colour in place instead of starting a new one.
func TestSavepointCompletingAfterAnInPlaceChangePatchesInPlace(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Image = "flink:1.20"
		s.Template.Spec.Job.AllowNonRestoredState = ptr(true)
	}, "main@sha1:r3")
	w.completeSnapshot()
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectChildren(Blue)
	if len(d.Actions) != 1 || d.Actions[0].Type != ApplyChild || d.Actions[0].Child.Name != "orders-blue" ||
		d.Actions[0].Child.Spec.Job.AllowNonRestoredState == nil {
		w.fatalf("want blue patched in place, got %s", describeActions(d.Actions))
	}
	if st := w.status(); st.ActiveDeployment != "orders-blue" || st.TargetRevision != "main@sha1:r3" {
		w.fatalf("status %+v", st)
	}
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
}

// Helpers.

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

// First deployments, timers, and what the status and events say.

func TestFirstDeploymentIsReportedStepByStep(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.now = t0.Add(300 * time.Millisecond)
	d := w.step()
	w.expectEvents(d, "DeploymentStarted")
	if m := eventMessage(d, "DeploymentStarted"); m != "deploying orders-blue from main@sha1:r1" {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "deploying orders-blue (main@sha1:r1)")
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonProgressing, "deploying orders-blue (main@sha1:r1)")
	var types []string
	for _, c := range w.status().Conditions {
		types = append(types, c.Type)
	}
	if strings.Join(types, ",") != "Ready,Reconciling" {
		w.fatalf("conditions not sorted by type: %v", types)
	}
	// A timer never runs shorter than asked: the deadline is rounded up to
	// the second the API server keeps.
	w.expectTime("abortTimestamp", w.status().AbortTimestamp, t0.Add(10*time.Minute+time.Second))
	w.expectTime("lastReconciledTimestamp", w.status().LastReconciledTimestamp, t0)
	w.expectRequeue(d, 15*time.Second)

	// While blue comes up: polled every interval, and at the deadline.
	w.advance(time.Minute)
	d = w.step()
	w.expectRequeue(d, 15*time.Second)
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing,
		"waiting for orders-blue to become ready (abort at 2026-07-20T12:10:01Z)")
	w.now = t0.Add(10*time.Minute + time.Second - 5*time.Second)
	d = w.step()
	w.expectRequeue(d, 5*time.Second)

	w.ready(Blue)
	d = w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectEvents(d, "DeploymentCompleted")
	if m := eventMessage(d, "DeploymentCompleted"); m != "orders-blue is active with main@sha1:r1" {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionTrue, ReasonSucceeded, "orders-blue runs main@sha1:r1")
}

// Without spec.configuration: a grace period of 10 minutes, polled every
// 15 seconds.
func TestTimerDefaults(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Configuration = nil
	d := w.step()
	w.expectTime("abortTimestamp", w.status().AbortTimestamp, t0.Add(10*time.Minute))
	w.expectRequeue(d, 15*time.Second)
}

func TestAParentWithoutRevisionSaysSo(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	delete(w.parent.Annotations, v1alpha1.RevisionAnnotation)
	d := w.step()
	if m := eventMessage(d, "DeploymentStarted"); m != "deploying orders-blue from unknown revision" {
		w.fatalf("event %q", m)
	}
}

func TestCommandsInMessagesNameTheNamespace(t *testing.T) {
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "prod"}}
	if got := (&decider{p: p}).cmd("retry"); got != "`bg-gitops retry fbgd orders -n prod`" {
		t.Errorf("cmd = %s", got)
	}
	p.Namespace = ""
	if got := (&decider{p: p}).cmd("retry"); got != "`bg-gitops retry fbgd orders`" {
		t.Errorf("cmd = %s", got)
	}
}

func TestDecideWithoutParentIsAnError(t *testing.T) {
	if _, err := Decide(Input{}); err == nil {
		t.Fatal("Decide without a FlinkBlueGreenDeployment: want an error")
	}
}

// A retry of an aborted first deployment is acknowledged by the decision
// that acts on it, not reported as ignored later.
func TestRetryOfAnAbortedFirstDeploymentIsAcknowledgedAtOnce(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.step()
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sInit, jFailing)
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectEvents(d, "DeploymentStarted")
	if w.status().LastHandledRetryAt != "x1" || w.children[Blue].suspendedSpec() {
		w.fatalf("retry: %+v %v", w.status(), w.childNames())
	}
	w.expectNoop(w.step())
}

// Promote and abort requests made while nothing is deployed are
// acknowledged and reported as ignored: they do not act on the first
// deployment that follows.
func TestRequestsBeforeTheFirstDeploymentAreIgnored(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	d := w.step()
	w.expectState(sInit, jSuspended)
	w.expectEvents(d, "Suspended")
	if m := eventMessage(d, "Suspended"); m != "spec.template.spec.job.state is suspended: no FlinkDeployment is started" {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonSuspended, "the job is suspended (spec.template.spec.job.state)")
	w.annotate(v1alpha1.PromoteRequestedAtAnnotation, "p0")
	w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a0")
	d = w.step()
	w.expectEvents(d, "PromoteIgnored", "AbortIgnored")
	if st := w.status(); st.LastHandledPromoteAt != "p0" || st.LastHandledAbortAt != "a0" {
		w.fatalf("requests not acknowledged: %+v", st)
	}
	resume(w, "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.advance(time.Minute)
	w.step()
	w.expectState(sToBlue, jReconciling)
}

// A suspended template leaves no job running, whatever children the status
// does not account for.
func TestSuspendedTemplateSuspendsEveryChild(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	w.parent.Status.BlueGreenState = v1alpha1.InitializingBlue
	w.running(Blue, t0)
	w.running(Green, t0)
	w.step()
	w.expectState(sInit, jSuspended)
	if !w.children[Blue].suspendedSpec() || !w.children[Green].suspendedSpec() {
		w.fatalf("children left running: %v", w.childNames())
	}
}

// A first deployment waits until a leftover of the same name is gone.
func TestFirstDeploymentWaitsForALeftoverToBeDeleted(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.step()
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sInit, jFailing)
	w.deleteByHand(Blue)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	if len(d.Actions) != 0 {
		w.fatalf("acted on a child being deleted: %s", describeActions(d.Actions))
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForDeletion",
		"waiting for FlinkDeployment orders-blue to be deleted before deploying")
	w.expectRequeue(d, 15*time.Second)
	w.gone()
	w.step()
	w.expectState(sToBlue, jReconciling)
}

// Adoption: a parent whose status was lost takes over the child that runs
// the job: running before suspended, ready before not ready, older before
// newer; another running child is suspended.
func TestAdoptionPicksTheChildThatRunsTheJob(t *testing.T) {
	older, newer := t0.Add(-2*time.Hour), t0.Add(-time.Hour)
	for _, tc := range []struct {
		name         string
		blue, green  func(w *world)
		want         Color
		suspendOther bool
	}{
		{"running before suspended", func(w *world) {
			b := w.running(Blue, older)
			b.Spec.Job.State, b.LifecycleState, b.JobState = v1alpha1.JobStateSuspended, LifecycleSuspended, "FINISHED"
		}, func(w *world) { w.running(Green, newer) }, Green, false},
		{"ready before not ready", func(w *world) {
			b := w.running(Blue, older)
			b.LifecycleState, b.JobState = "FAILED", "FAILED"
		}, func(w *world) { w.running(Green, newer) }, Green, true},
		{"older before newer", func(w *world) { w.running(Blue, newer) }, func(w *world) { w.running(Green, older) }, Green, true},
		{"older before newer, blue", func(w *world) { w.running(Blue, older) }, func(w *world) { w.running(Green, newer) }, Blue, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
			tc.blue(w)
			tc.green(w)
			d := w.step()
			want := w.children[tc.want]
			if st := w.status(); st.BlueGreenState != activeState(tc.want) || st.ActiveDeployment != want.Name || st.ActiveRevision != want.Revision {
				w.fatalf("adopted %s %s %s, want %s", st.BlueGreenState, st.ActiveDeployment, st.ActiveRevision, want.Name)
			}
			if m := eventMessage(d, "Adopted"); !strings.Contains(m, want.Name+" is taken as the active deployment") || !d.Events[0].Warning {
				w.fatalf("want a warning that %s was adopted, got %+v", want.Name, d.Events)
			}
			if other := w.children[tc.want.Other()]; other.suspendedSpec() != true {
				w.fatalf("%s left running beside the adopted %s", other.Name, want.Name)
			}
			if got := len(d.Actions) == 1; got != tc.suspendOther {
				w.fatalf("actions %s, want the other colour suspended: %v", describeActions(d.Actions), tc.suspendOther)
			}
		})
	}
}

// Suspending a child changes only its job.state: the job it runs is kept
// for the resume; a child whose job section is gone is suspended too.
func TestSuspendingAChildKeepsItsJob(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	want := w.children[Green].Spec.DeepCopy()
	want.Job.State = v1alpha1.JobStateSuspended
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	if !reflect.DeepEqual(&w.children[Green].Spec, want) {
		w.fatalf("suspended green %+v, want %+v", w.children[Green].Spec.Job, want.Job)
	}

	w = newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.running(Blue, t0.Add(-time.Hour))
	w.running(Green, t0).Spec.Job = nil
	w.step()
	w.expectState(sActiveBlue, jRunning)
	if j := w.children[Green].Spec.Job; j == nil || j.State != v1alpha1.JobStateSuspended {
		w.fatalf("green not suspended: %+v", j)
	}
}

// The active child deleted by hand: the status says what happened and how
// to recover; a retry redeploys it from spec.template as a first
// deployment, which is aborted (suspended) like one if it never runs.
func TestRedeployOfADeletedActiveChildIsAFirstDeployment(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Green)
	d := w.step()
	w.expectState(sActiveGreen, jFailing)
	w.expectError("active FlinkDeployment orders-green is being deleted outside bg-gitops; once it is gone, run `bg-gitops retry fbgd orders -n prod`")
	w.expectRequeue(d, 15*time.Second)
	w.gone()
	d = w.step()
	w.expectError("active FlinkDeployment orders-green is missing (deleted outside bg-gitops?)")
	w.expectRequeue(d, 0)
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	d = w.step()
	w.expectState(sToGreen, jReconciling)
	w.expectEvents(d, "RedeployStarted")
	if st := w.status(); st.ActiveDeployment != "" || st.Savepoint != nil || st.LastHandledRetryAt != "x1" {
		w.fatalf("a redeploy from spec.template has no active deployment and no savepoint: %+v", st)
	}
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sInit, jFailing)
	if !w.children[Green].suspendedSpec() {
		w.fatalf("the aborted redeploy is left running")
	}
}

// A commit that rolls nothing out (it reverts the failed change; a new
// initialSavepointPath is used by the next colour only) is recorded as
// handled and ends the failed rollout's FAILING: the job runs, the commit
// is the target, and the colour the abort left suspended is deleted.
func TestACommitWithNothingToRollOutEndsAFailure(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectCondition(v1alpha1.StalledCondition, metav1.ConditionTrue, ReasonRolloutFail, "transition to orders-green aborted")
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonRolloutFail, w.status().Error)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Image = "flink:1.20"
		s.Template.Spec.Job.InitialSavepointPath = "/user/other"
	}, "main@sha1:r3")
	d := w.step()
	w.expectState(sActiveBlue, jRunning)
	if describeActions(d.Actions) != "[delete(orders-green)]" || w.status().Error != "" || w.status().LastReconciledSpec != w.specJSON() ||
		w.status().TargetRevision != "main@sha1:r3" {
		w.fatalf("want the commit recorded and the leftover deleted: %s %+v", describeActions(d.Actions), w.status())
	}
	w.expectNoCondition(v1alpha1.StalledCondition)
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionTrue, ReasonSucceeded, "orders-blue runs main@sha1:r1")
}

// The active job that stops after the cut-over is reported not ready, with
// what the Flink operator says.
func TestReadyReportsAnActiveJobThatIsNotReady(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Green)
	w.step()
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonJobNotReady,
		"active FlinkDeployment orders-green is not ready (lifecycle FAILED, job FAILED)")
}

// In-place changes.

// An in-place patch is a transition of its own: it has a start, a target
// revision, a deadline and a report; the patched child keeps the savepoint
// it was started from.
func TestInPlacePatchIsReported(t *testing.T) {
	w, sp := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	w.advance(time.Minute)
	parallelismDefault(w, "4", "main@sha1:r3")
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	if got := w.expectApply(d, "orders-green").Job.InitialSavepointPath; got != sp {
		w.fatalf("patched green starts from %q, want its own savepoint %q", got, sp)
	}
	st := w.status()
	if st.TargetRevision != "main@sha1:r3" || st.DeploymentReadyTimestamp != nil {
		w.fatalf("status %+v", st)
	}
	w.expectTime("transitionStartTime", st.TransitionStartTime, w.now)
	w.expectTime("abortTimestamp", st.AbortTimestamp, w.now.Add(10*time.Minute))
	w.expectEvents(d, "PatchStarted")
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "patching orders-green in place (PATCH_CHILD)")
	w.expectRequeue(d, 15*time.Second)
	w.ready(Green)
	d = w.step()
	w.expectState(sActiveGreen, jRunning)
	w.expectEvents(d, "PatchCompleted")
}

// A patch keeps the child's own initialSavepointPath when the
// savepointRedeployNonce stays the same.
func TestInPlacePatchWithAnUnchangedRedeployNonceKeepsTheSavepoint(t *testing.T) {
	w, sp := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint, func(w *world) {
		w.parent.Spec.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
	})
	parallelismDefault(w, "4", "main@sha1:r3")
	d := w.step()
	if got := w.expectApply(d, "orders-green").Job.InitialSavepointPath; got != sp {
		w.fatalf("patched green starts from %q, want its own savepoint %q", got, sp)
	}
}

// Resuming with a new savepointRedeployNonce and initialSavepointPath
// redeploys the job from the path the user chose.
func TestResumeWithANewRedeployNonceGivesTheChosenPath(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, "main@sha1:r3")
	w.step()
	w.suspendDone(Green)
	w.step()
	w.expectState(sActiveGreen, jSuspended)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.State = v1alpha1.JobStateRunning
		s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
		s.Template.Spec.Job.InitialSavepointPath = "/user/chosen"
	}, "main@sha1:r4")
	d := w.step()
	if got := w.expectApply(d, "orders-green").Job.InitialSavepointPath; got != "/user/chosen" {
		w.fatalf("resumed green starts from %q, want /user/chosen", got)
	}
}

// A suspend applied in place ends when the Flink operator reports the job
// suspended for the current spec — not before — and then the status says
// so, without a deadline.
func TestInPlaceSuspendEndsWhenTheOperatorReportsIt(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, "main@sha1:r2")
	w.step()
	w.step()
	w.expectState(sToBlue, jReconciling) // the operator has not acted yet
	w.suspendDone(Blue)
	d := w.step()
	w.expectState(sActiveBlue, jSuspended)
	w.expectEvents(d, "Suspended")
	if m := eventMessage(d, "Suspended"); m != "orders-blue is suspended" || w.status().AbortTimestamp != nil {
		w.fatalf("event %q, abortTimestamp %v", m, w.status().AbortTimestamp)
	}
	// A change while suspended is applied in place; a SUSPENDED that the
	// operator reports for the previous generation does not end it.
	newImage(w, "flink:1.20.1", "main@sha1:r3")
	w.step()
	w.expectState(sToBlue, jReconciling)
	b := w.children[Blue]
	b.LifecycleState, b.JobState, b.Generation, b.ObservedGeneration = LifecycleSuspended, "FINISHED", 2, 1
	w.step()
	w.expectState(sToBlue, jReconciling)
	b.ObservedGeneration = 2
	w.step()
	w.expectState(sActiveBlue, jSuspended)
}

// A suspend the Flink operator never carries out ends at the deadline,
// leaving the job as it is.
func TestInPlaceSuspendThatNeverCompletesEndsAtTheDeadline(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	suspend(w, "main@sha1:r2")
	w.step()
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectError("in-place change of orders-blue did not complete")
}

// During an in-place patch, another patch is re-applied at once (keeping
// the child's savepoint), while a change that needs a new colour waits for
// the patch to complete; the patched job is then reported running while
// the new colour waits for its rollout window.
func TestChangesDuringAnInPlacePatch(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	w.ready(Blue)
	w.step()
	parallelismDefault(w, "4", "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	parallelismDefault(w, "8", "main@sha1:r3")
	d := w.step()
	spec := w.expectApply(d, "orders-blue")
	if spec.Job.InitialSavepointPath != "/user/sp-0" || !strings.Contains(string(spec.FlinkConfiguration.Raw), `"parallelism.default":"8"`) {
		w.fatalf("re-applied blue: %s %s", spec.Job.InitialSavepointPath, spec.FlinkConfiguration.Raw)
	}
	if m := eventMessage(d, "TransitionUpdated"); !strings.Contains(m, "re-applying orders-blue with main@sha1:r3") {
		w.fatalf("event %q", m)
	}
	newImage(w, "flink:1.20.1", "main@sha1:r4")
	w.expectNoop(w.step())
	w.window = Window{OpensAt: w.now.Add(time.Hour), Description: "waiting for rollout window 02:00–04:00 UTC"}
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForRolloutWindow", "to roll out main@sha1:r4")
	w.window = Window{Open: true}
	w.step()
	w.expectState(sSpBlue, jReconciling)
}

// A suspended leftover of an aborted transition is deleted once an
// in-place change of the active colour completes.
func TestLeftoverIsDeletedWhenAnInPlaceChangeCompletes(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	parallelismDefault(w, "4", "main@sha1:r3")
	newImage(w, "flink:1.20", "main@sha1:r3") // the failed image change reverted
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.ready(Blue)
	d := w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectDelete(d, "orders-green")
}

// The active child deleted during an in-place change: the status reports
// it and carries no deadline.
func TestActiveChildDeletedDuringAnInPlaceChange(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r2")
	w.step()
	w.deleteByHand(Blue)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	if w.status().AbortTimestamp != nil {
		w.fatalf("abortTimestamp %v outside a transition", w.status().AbortTimestamp)
	}
}

// Blue/green transitions.

// A savepoint is started with a report: the target revision, the start of
// the transition, the job it is taken of; while it is pending nothing is
// done but polling, and a snapshot lost before the status write is asked
// for again under the same name.
func TestSavepointStartIsReported(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.advance(time.Minute)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	w.expectState(sSpBlue, jReconciling)
	st := w.status()
	name := st.Savepoint.Name
	if st.TargetRevision != "main@sha1:r2" {
		w.fatalf("targetRevision %q", st.TargetRevision)
	}
	w.expectTime("transitionStartTime", st.TransitionStartTime, w.now)
	w.expectEvents(d, "SavepointStarted")
	if m, want := eventMessage(d, "SavepointStarted"), "taking savepoint "+name+" of orders-blue (job job0001) to roll out main@sha1:r2"; m != want {
		w.fatalf("event %q, want %q", m, want)
	}
	w.expectRequeue(d, 15*time.Second)
	d = w.step()
	if len(d.Actions) != 0 {
		w.fatalf("a pending savepoint is asked for again: %s", describeActions(d.Actions))
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "Savepointing", "taking savepoint "+name+" of orders-blue")
	delete(w.snaps, name)
	d = w.step()
	if len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot || d.Actions[0].Snapshot.Name != name {
		w.fatalf("lost snapshot not asked for again: %s", describeActions(d.Actions))
	}

	// A savepoint timeout shorter than the polling interval is polled in time.
	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.SavepointTimeoutKey, "5 s")
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.expectRequeue(w.step(), 5*time.Second)
}

// The new colour of a savepoint transition starts from the savepoint, and
// the transition counts from the start of the savepoint.
func TestNewColourStartsFromTheSavepoint(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	start := w.now
	w.step()
	w.advance(30 * time.Second)
	sp := w.completeSnapshot()
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	w.expectTime("transitionStartTime", w.status().TransitionStartTime, start)
	if m := eventMessage(d, "TransitionStarted"); !strings.Contains(m, "starting orders-green from savepoint "+sp) {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "waiting for orders-green to become ready")
	w.expectRequeue(d, 15*time.Second)
}

// The same from green: a savepoint of green, then blue from it.
func TestSavepointOfGreenStartsBlue(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	w.expectState(v1alpha1.SavepointingGreen, jReconciling)
	sp := w.completeSnapshot()
	w.step()
	w.expectState(sToBlue, jReconciling)
	if got := w.children[Blue].Spec.Job.InitialSavepointPath; got != sp {
		w.fatalf("blue starts from %q, want %q", got, sp)
	}
}

// A stateless transition starts from spec.template with no savepoint in
// the status — not even an earlier transition's, which a change that makes
// it stateful would otherwise restart the new colour from.
func TestStatelessTransitionCarriesNoOldSavepoint(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.UpgradeMode = v1alpha1.UpgradeModeStateless
	}, "main@sha1:r3")
	w.step()
	w.ready(Green)
	w.step()
	w.expectState(sActiveGreen, jRunning)
	w.advance(time.Hour)
	newImage(w, "flink:1.20.2", "main@sha1:r4")
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	if w.status().Savepoint != nil {
		w.fatalf("stateless transition shows savepoint %+v", w.status().Savepoint)
	}
	w.expectTime("transitionStartTime", w.status().TransitionStartTime, w.now)
	if m := eventMessage(d, "TransitionStarted"); !strings.Contains(m, "starting orders-blue from spec.template") {
		w.fatalf("event %q", m)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "waiting for orders-blue to become ready")
	w.expectRequeue(d, 15*time.Second)
	// Made stateful mid-way: blue holds none of green's state, so cutting
	// over would lose it. Blue is deleted, green stays active, and the
	// change rolls out from a savepoint of green once blue is gone.
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.UpgradeMode = v1alpha1.UpgradeModeSavepoint
	}, "main@sha1:r5")
	d = w.step()
	if len(d.Actions) != 1 || d.Actions[0].Type != DeleteChild || d.Actions[0].ChildName != "orders-blue" {
		w.fatalf("actions %s", describeActions(d.Actions))
	}
	if m := eventMessage(d, "TransitionRestarted"); !strings.Contains(m, "orders-blue started without a savepoint of orders-green") {
		w.fatalf("event %q", m)
	}
	w.expectState(sActiveGreen, jReconciling)
	w.gone()
	w.step()
	w.expectState(v1alpha1.SavepointingGreen, jReconciling)
}

// A stateless new colour changed mid-transition is re-applied at once,
// from the template's initialSavepointPath.
func TestStatelessNewColourIsReappliedWithTheChange(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeStateless)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	w.ready(Blue)
	w.step()
	startTransition(w, v1alpha1.UpgradeModeStateless)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	d := w.step()
	spec := w.expectApply(d, "orders-green")
	if spec.Image != "flink:1.20.2" || spec.Job.InitialSavepointPath != "/user/sp-0" {
		w.fatalf("green re-applied with %s from %q", spec.Image, spec.Job.InitialSavepointPath)
	}
	if m := eventMessage(d, "TransitionUpdated"); !strings.Contains(m, "re-applying orders-green with main@sha1:r3") {
		w.fatalf("event %q", m)
	}
}

// A first deployment changed mid-way is re-applied from the template's
// initialSavepointPath.
func TestFirstDeploymentIsReappliedWithTheChange(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeStateless)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Job.Parallelism = ptr(int32(4)) }, "main@sha1:r2")
	d := w.step()
	spec := w.expectApply(d, "orders-blue")
	if *spec.Job.Parallelism != 4 || spec.Job.InitialSavepointPath != "/user/sp-0" {
		w.fatalf("blue re-applied with parallelism %d from %q", *spec.Job.Parallelism, spec.Job.InitialSavepointPath)
	}
}

// A stateful new colour changed mid-way is restarted from the savepoint,
// with a fresh grace period and a report.
func TestChangeDuringATransitionRestartsTheNewColour(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(9 * time.Minute)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	d := w.step()
	w.expectDelete(d, "orders-green")
	if m := eventMessage(d, "TransitionRestarted"); !strings.Contains(m, "orders-green is deleted and starts again for main@sha1:r3 from a fresh savepoint") {
		w.fatalf("event %q", m)
	}
	if w.status().AbortTimestamp != nil {
		w.fatalf("abortTimestamp %v kept while a fresh savepoint is taken", w.status().AbortTimestamp)
	}
	w.expectTime("savepoint triggered", w.status().Savepoint.TriggerTimestamp, w.now)
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "Savepointing", "taking savepoint "+w.status().Savepoint.Name+" of orders-blue")
	w.expectRequeue(d, 15*time.Second)

	// A ready new colour changed mid-way is ready no longer.
	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "1 h")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	if w.status().DeploymentReadyTimestamp == nil {
		w.fatalf("no ready timestamp")
	}
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	if w.status().DeploymentReadyTimestamp != nil {
		w.fatalf("ready timestamp %v kept for a restarted green", w.status().DeploymentReadyTimestamp)
	}
}

// A new colour deleted by hand is waited for (and re-created) until the
// deadline; past the deadline the transition is aborted.
func TestNewColourDeletedByHand(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(time.Minute)
	w.deleteByHand(Green)
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	if len(d.Actions) != 0 {
		w.fatalf("acted on a child being deleted: %s", describeActions(d.Actions))
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, "waiting for orders-green to be (re)created")
	w.expectRequeue(d, 15*time.Second)

	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.deleteByHand(Green)
	w.gone()
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectError("transition to orders-green aborted: orders-green is missing")
}

// The old colour deleted by hand mid-transition: the new colour becomes
// the active deployment at once, and the status says so once.
func TestOldColourDeletedByHandCutsOver(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Blue)
	w.gone()
	d := w.step()
	w.expectState(sToGreen, jReconciling)
	if w.status().ActiveDeployment != "orders-green" || eventMessage(d, "CutOver") != "orders-blue is gone; orders-green is now the active deployment" {
		w.fatalf("activeDeployment %q, events %+v", w.status().ActiveDeployment, d.Events)
	}
	w.expectNoop(w.step())
}

// The deletion delay is reported while it runs.
func TestDeletionDelayIsReported(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "5 s")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForDeletionDelay",
		"orders-green is ready; deleting orders-blue at 2026-07-20T12:00:05Z")
}

// A promotion requested during the deletion delay is acknowledged at the
// cut-over, and reported once, as the promotion.
func TestPromotionDuringTheDeletionDelayIsReportedOnce(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	manual(w)
	w.config(v1alpha1.DeploymentDeletionDelayKey, "5 s")
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.annotate(v1alpha1.PromoteRequestedAtAnnotation, "p1")
	w.step()
	if w.status().LastHandledPromoteAt != "" {
		w.fatalf("promotion acknowledged before the cut-over")
	}
	w.advance(5 * time.Second)
	d := w.step()
	w.expectState(sActiveGreen, jRunning)
	w.expectEvents(d, "Promoted")
	if w.status().LastHandledPromoteAt != "p1" {
		w.fatalf("promotion not acknowledged")
	}
}

// An abort requested while green waits for promotion is reported once.
func TestAbortRequestIsReportedOnce(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	manual(w)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.step()
	w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
	d := w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectEvents(d, "Aborted")
}

// Savepoints.

func TestRequestsWhileSavepointing(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		// Nothing to retry yet: acknowledged, and the failed savepoint is
		// not taken again because of it.
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
		d := w.step()
		w.expectEvents(d, "RetryIgnored")
		w.failSnapshot(SnapshotFailed, "boom")
		w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectNoop(w.step())
	})
	t.Run("abort", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
		d := w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectEvents(d, "Aborted")
	})
	t.Run("active deleted", func(t *testing.T) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.deleteByHand(Blue)
		d := w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectEvents(d, "SavepointFailed", "ActiveDeploymentMissing")
		if m := eventMessage(d, "SavepointFailed"); !strings.Contains(m, "transition not started: active FlinkDeployment orders-blue disappeared while taking the savepoint") {
			w.fatalf("event %q", m)
		}
	})
}

// A SAVEPOINTING status that lost its savepoint record ends the attempt;
// a snapshot of another name is not this savepoint; a record without a
// trigger time counts the timeout from now.
func TestSavepointRecordDefects(t *testing.T) {
	for _, sp := range []*v1alpha1.SavepointStatus{nil, {}} {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		w.parent.Status.Savepoint = sp
		w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectError("the savepoint record in status.savepoint was lost")
	}

	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	name := w.status().Savepoint.Name
	in := w.input()
	in.Snapshot = &Snapshot{Name: "other", State: SnapshotCompleted, Path: "file:/sp/other"}
	d, err := Decide(in)
	if err != nil || d.Status.BlueGreenState != sSpBlue || len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot ||
		d.Actions[0].Snapshot.Name != name {
		t.Fatalf("another snapshot taken for %s: %v %s %s", name, err, d.Status.BlueGreenState, describeActions(d.Actions))
	}

	w.parent.Status.Savepoint.TriggerTimestamp = nil
	w.snapshot().State = SnapshotInProgress
	d = w.step()
	w.expectState(sSpBlue, jReconciling)
	w.expectRequeue(d, 15*time.Second)
}

// The name of the new colour still taken when the savepoint completes (a
// child that appeared meanwhile, or is still being deleted): it is
// deleted, and the new colour starts once the name is free — within the
// savepoint timeout.
func TestSavepointDoneWhileTheNewColourNameIsTaken(t *testing.T) {
	savepointing := func(t *testing.T) (*world, string) {
		w := deployed(t, v1alpha1.UpgradeModeSavepoint)
		newImage(w, "flink:1.20.1", "main@sha1:r2")
		w.step()
		return w, "/sp/savepoint-" + w.status().Savepoint.Name
	}
	t.Run("a child that appeared", func(t *testing.T) {
		w, _ := savepointing(t)
		w.running(Green, t0).Spec.Job.InitialSavepointPath = "/elsewhere"
		sp := w.completeSnapshot()
		d := w.step()
		w.expectState(sSpBlue, jReconciling)
		w.expectDelete(d, "orders-green")
		w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForDeletion",
			"savepoint done; waiting for FlinkDeployment orders-green to be deleted")
		w.expectRequeue(d, 15*time.Second)
		d = w.step()
		if len(d.Actions) != 0 {
			w.fatalf("deleted again: %s", describeActions(d.Actions))
		}
		w.gone()
		w.step()
		w.expectState(sToGreen, jReconciling)
		if got := w.children[Green].Spec.Job.InitialSavepointPath; got != sp {
			w.fatalf("green starts from %q, want %q", got, sp)
		}
	})
	t.Run("not deleted in time", func(t *testing.T) {
		w, _ := savepointing(t)
		w.running(Green, t0)
		w.completeSnapshot()
		w.step()
		w.advance(10 * time.Minute)
		w.step()
		w.expectState(sActiveBlue, jFailing)
		w.expectError("FlinkDeployment orders-green was not deleted within 10m0s")
	})
	t.Run("suspended, from this savepoint", func(t *testing.T) {
		w, sp := savepointing(t)
		g := w.running(Green, t0)
		g.Spec.Job.InitialSavepointPath, g.Spec.Job.State, g.LifecycleState = sp, v1alpha1.JobStateSuspended, LifecycleSuspended
		w.completeSnapshot()
		w.expectDelete(w.step(), "orders-green")
	})
	t.Run("being deleted, from this savepoint", func(t *testing.T) {
		w, sp := savepointing(t)
		w.running(Green, t0).Spec.Job.InitialSavepointPath = sp
		w.deleteByHand(Green)
		w.completeSnapshot()
		d := w.step()
		w.expectState(sSpBlue, jReconciling)
		if len(d.Actions) != 0 {
			w.fatalf("acted on a child being deleted: %s", describeActions(d.Actions))
		}
	})
}

// A savepoint redeploy committed while the savepoint is taken starts the
// new colour from the chosen path, not from the savepoint.
func TestSavepointRedeployCommittedWhileSavepointing(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
		s.Template.Spec.Job.InitialSavepointPath = "/user/sp-9"
	}, "main@sha1:r3")
	w.completeSnapshot()
	w.step()
	w.expectState(sToGreen, jReconciling)
	if got := w.children[Green].Spec.Job.InitialSavepointPath; got != "/user/sp-9" {
		w.fatalf("green starts from %q, want /user/sp-9", got)
	}
}

// Waiting for the active job and for a rollout window.

// A change that finds the active job not ready says why, with what the
// Flink operator reports, and waits for it.
func TestChangeWaitsForTheActiveJob(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Blue)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	if w.status().TargetRevision != "main@sha1:r2" {
		w.fatalf("targetRevision %q", w.status().TargetRevision)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForActiveJob", "(lifecycle FAILED, job FAILED)")
	w.ready(Blue)
	b := w.children[Blue]
	b.JobState, b.Generation, b.ObservedGeneration = "", 2, 1
	w.step()
	w.expectError("(lifecycle STABLE, job -, spec not yet observed by the Flink operator)")

	// Ready again while the rollout window is closed: the wait for the
	// window is reported (the window opens this very instant: polled in a
	// second).
	b.JobState, b.ObservedGeneration = JobRunning, 2
	w.window = Window{OpensAt: w.now}
	d := w.step()
	w.expectEvents(d, "WaitingForRolloutWindow")
	if m := eventMessage(d, "WaitingForRolloutWindow"); m != "waiting for rollout window to roll out main@sha1:r2" {
		w.fatalf("event %q", m)
	}
	w.expectRequeue(d, time.Second)
	// The rollout has not failed: it waits (a commit status is pending).
	w.expectState(sActiveBlue, jRunning)
	if w.status().Error != "" {
		w.fatalf("stale error %q while waiting for the window", w.status().Error)
	}
}

// A commit that follows a failed rollout and waits for the rollout window
// does not carry the earlier failure.
func TestACommitWaitingForTheWindowDoesNotCarryAnEarlierFailure(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.failSnapshot(SnapshotFailed, "boom")
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.window = Window{OpensAt: w.now.Add(time.Hour), Description: "waiting for rollout window 02:00–04:00 UTC"}
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	w.step()
	w.expectState(sActiveBlue, jRunning)
	if st := w.status(); st.Error != "" || st.TargetRevision != "main@sha1:r3" {
		w.fatalf("status %+v", st)
	}
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForRolloutWindow", "to roll out main@sha1:r3")
}

// Actions the API server refuses for good (Input.Rejection).

const retryHintProd = "Fix the cause and push a new commit, or run `bg-gitops retry fbgd orders -n prod` to try again"

// A refused re-apply of the new colour ends the transition: the new colour
// is suspended, the old one keeps running, and the status carries no
// deadline of the transition that ended.
func TestRejectedNewColourIsSuspended(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	startTransition(w, v1alpha1.UpgradeModeStateless)
	w.advance(time.Minute)
	newImage(w, invalidImage, "main@sha1:r3")
	w.stepRejecting(applyOf("orders-green"), "admission webhook denied the request")
	w.expectState(sActiveBlue, jFailing)
	st := w.status()
	if !w.children[Green].suspendedSpec() || st.AbortTimestamp != nil || st.DeploymentReadyTimestamp != nil || st.TargetRevision != "main@sha1:r3" {
		w.fatalf("after the rejection: %v %+v", w.childNames(), st)
	}
	w.expectError("transition to orders-green not started: the API server rejected FlinkDeployment orders-green: " +
		"admission webhook denied the request; orders-blue keeps running. " + retryHintProd)
}

// A refused in-place change leaves the job as it is; a retry applies it
// again and is acknowledged by that decision.
func TestRejectedInPlaceChangeThenRetry(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r2")
	w.step()
	parallelismDefault(w, "8", "main@sha1:r3")
	w.stepRejecting(applyOf("orders-blue"), "forbidden")
	w.expectState(sActiveBlue, jFailing)
	w.expectError("in-place change of orders-blue not applied: the API server rejected FlinkDeployment orders-blue: forbidden; the job is left as it is")
	if w.children[Blue].suspendedSpec() {
		w.fatalf("the only job was suspended")
	}
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	d := w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectApply(d, "orders-blue")
	if w.status().LastHandledRetryAt != "x1" {
		w.fatalf("retry not acknowledged")
	}
}

// A refused redeploy of a lost active child says so.
func TestRejectedRedeploy(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.deleteByHand(Blue)
	w.gone()
	w.step()
	w.annotate(v1alpha1.RetryRequestedAtAnnotation, "x1")
	w.stepRejecting(applyOf("orders-blue"), "quota exceeded")
	w.expectState(sActiveBlue, jFailing)
	w.expectError("redeploy of orders-blue not started: the API server rejected FlinkDeployment orders-blue: quota exceeded")
}

// A refused re-apply of a first deployment suspends it.
func TestRejectedFirstDeploymentChangeSuspendsIt(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeStateless)
	w.step()
	newImage(w, invalidImage, "main@sha1:r2")
	w.stepRejecting(applyOf("orders-blue"), "invalid")
	w.expectState(sInit, jFailing)
	w.expectError("deployment of orders-blue not started")
	if !w.children[Blue].suspendedSpec() {
		w.fatalf("blue left running")
	}
}

// A refused delete of a first deployment that must restart from its
// savepoint suspends it.
func TestRefusedDeleteOfAFirstDeploymentSuspendsIt(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.Job.InitialSavepointPath = "/user/sp-0"
	w.step()
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.stepRejecting(deleteOf("orders-blue"), "forbidden")
	w.expectState(sInit, jFailing)
	if w.status().Error != "the API server refused to delete FlinkDeployment orders-blue: forbidden. "+retryHintProd {
		w.fatalf("error %q", w.status().Error)
	}
	if !w.children[Blue].suspendedSpec() {
		w.fatalf("blue left running")
	}
}

// A refused delete of the old colour at the cut-over ends the transition
// at once: blue keeps running, green is suspended.
func TestRefusedDeleteAtTheCutOver(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.ready(Green)
	w.stepRejecting(deleteOf("orders-blue"), "forbidden")
	w.expectState(sActiveBlue, jFailing)
	if !w.children[Green].suspendedSpec() || w.status().ActiveRevision != "main@sha1:r1" {
		w.fatalf("after the refused delete: %v %+v", w.childNames(), w.status())
	}
	w.expectError("the API server refused to delete FlinkDeployment orders-blue: forbidden; orders-blue keeps running.")
}

// A refused in-place change right after the cut-over (the change waited
// for the transition) leaves the new colour running: it is the only job.
func TestRefusedChangeAfterTheCutOverKeepsTheOnlyJob(t *testing.T) {
	for _, target := range []Color{Green, Blue} {
		t.Run(string(target), func(t *testing.T) {
			w := deployed(t, v1alpha1.UpgradeModeStateless)
			if target == Blue {
				startTransition(w, v1alpha1.UpgradeModeStateless)
				w.ready(Green)
				w.step()
				w.gone()
				w.expectState(sActiveGreen, jRunning)
				newImage(w, "flink:1.20.2", "main@sha1:r3")
				w.step()
			} else {
				startTransition(w, v1alpha1.UpgradeModeStateless)
			}
			w.expectState(transitioningTo(target), jReconciling)
			suspend(w, "main@sha1:r9") // waits for the cut-over
			w.expectNoop(w.step())
			w.ready(target)
			name := ChildName("orders", target)
			w.stepRejecting(applyOf(name), "forbidden")
			w.expectState(activeState(target), jFailing)
			w.expectError("in-place change of " + name + " not applied")
			if w.children[target].suspendedSpec() {
				w.fatalf("the only job was suspended: %v", w.childNames())
			}
		})
	}
}

// A refused in-place change of an active green (blue long gone) says so.
func TestRefusedInPlaceChangeOfGreen(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r3")
	w.stepRejecting(applyOf("orders-green"), "forbidden")
	w.expectState(sActiveGreen, jFailing)
	w.expectError("in-place change of orders-green not applied")
}

// Parsers and classification.

func TestWindowDurationLimits(t *testing.T) {
	now := time.Date(2026, 7, 20, 12, 0, 0, 0, time.UTC)
	for dur, ok := range map[string]bool{"24h": true, "8784h": true, "8785h": false} {
		if _, err := WindowState([]v1alpha1.RolloutWindow{win("0 2 * * *", dur, "")}, now); (err == nil) != ok {
			t.Errorf("window of %s: err = %v, want ok=%v", dur, err, ok)
		}
	}
	// A window that never opens does not hide one that does.
	got, err := WindowState([]v1alpha1.RolloutWindow{win("0 14 * * *", "1h", ""), win("0 2 30 2 *", "1h", "")}, now)
	if err != nil || got.Open || !got.OpensAt.Equal(time.Date(2026, 7, 20, 14, 0, 0, 0, time.UTC)) {
		t.Errorf("WindowState = %+v, %v; want closed until 14:00", got, err)
	}
	if _, err := WindowState([]v1alpha1.RolloutWindow{win("TZ=UTC 0 2 * * *", "1h", "")}, now); err == nil ||
		!strings.Contains(err.Error(), "set timeZone instead") {
		t.Errorf("TZ= prefix: err = %v", err)
	}
}

// The cron parser panics on some input (robfig/cron#554); parseCron
// returns an error instead.
func TestParseCronTurnsAPanicIntoAnError(t *testing.T) {
	if _, err := parseCron("TZ=0"); err == nil || !strings.Contains(err.Error(), "unparsable") {
		t.Fatalf("err = %v", err)
	}
}

func TestClassifyEdgeCases(t *testing.T) {
	base := baseSpec(v1alpha1.UpgradeModeSavepoint)

	// Removing restartNonce restarts nothing: patched in place.
	old := base.DeepCopy()
	old.Template.Spec.RestartNonce = ptr(int64(1))
	if d := Classify(old, &base); d.Type != DiffPatchChild {
		t.Errorf("restartNonce removed: %+v", d)
	}

	// A template without job compares as a job with the defaults.
	old = base.DeepCopy()
	old.Template.Spec.Job = nil
	cur := base.DeepCopy()
	cur.Template.Spec.Job = &v1alpha1.JobSpec{}
	if d := Classify(old, cur); d.Type != DiffIgnore {
		t.Errorf("no job vs empty job: %+v", d)
	}

	// Integers compare exactly, beyond float64 precision.
	old = base.DeepCopy()
	old.Template.Spec.Job.SavepointTriggerNonce = ptr(int64(9007199254740992))
	cur = base.DeepCopy()
	cur.Template.Spec.Job.SavepointTriggerNonce = ptr(int64(9007199254740993))
	if d := Classify(old, cur); d.Type != DiffPatchChild {
		t.Errorf("large nonce changed: %+v", d)
	}

	// A key spelled both flat and nested: the same spec never differs from
	// itself.
	cur = base.DeepCopy()
	cur.Template.Spec.FlinkConfiguration = rawJSON(`{"parallelism.default":"2","parallelism":{"default":"4"}}`)
	for i := 0; i < 100; i++ {
		if d := Classify(cur, cur); d.Type != DiffIgnore {
			t.Fatalf("a spec differs from itself: %+v", d)
		}
	}
}

func TestPlanOfSpecsWithoutJob(t *testing.T) {
	base := planSpec(nil)
	base.Template.Spec.Job = nil
	if r, d := Plan(base, planSpec(nil)); r != RolloutBlueGreenStateless || strings.Join(d.Fields, ",") != "job.jarURI" {
		t.Errorf("Plan from a base without job = %s %+v", r, d)
	}
	base = planSpec(func(j *v1alpha1.JobSpec, _ *v1alpha1.FlinkDeploymentSpec) { j.InitialSavepointPath = "/x" })
	spec := planSpec(nil)
	spec.Template.Spec.Job = nil
	if got := withSavepointPath(base, spec); got.Template.Spec.Job.InitialSavepointPath != "" {
		t.Errorf("withSavepointPath to a spec without job keeps %q", got.Template.Spec.Job.InitialSavepointPath)
	}
	if got := withSavepointPath(base, nil); got != base {
		t.Errorf("withSavepointPath(base, nil) is not base")
	}
}

func TestSnapshotNames(t *testing.T) {
	for in, want := range map[string]string{
		"orders": "orders", "Orders_Blue.az09": "orders-blue-az09", "a": "a", "z": "z", "0": "0", "9": "9",
		"-x-": "x", "__": "fbgd", "abcdef": "abc",
	} {
		max := 63
		if in == "abcdef" {
			max = 3
		}
		if got := dnsPrefix(in, max); got != want {
			t.Errorf("dnsPrefix(%q, %d) = %q, want %q", in, max, got, want)
		}
	}
	// The parts of a name do not run into each other.
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	d := &decider{p: w.parent, spec: &w.parent.Spec}
	w.parent.Annotations[v1alpha1.RetryRequestedAtAnnotation] = "c"
	n1 := d.snapshotName(&Child{Name: "orders-blue", JobID: "ab"})
	w.parent.Annotations[v1alpha1.RetryRequestedAtAnnotation] = "bc"
	if n2 := d.snapshotName(&Child{Name: "orders-blue", JobID: "a"}); n1 == n2 {
		t.Errorf("job ab with retry c and job a with retry bc share the name %s", n1)
	}
}

// A new change after an aborted transition first deletes the suspended
// leftover of the new colour, and says so.
func TestLeftoverIsDeletedBeforeTheNextTransition(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	startTransition(w, v1alpha1.UpgradeModeSavepoint)
	w.advance(11 * time.Minute)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	newImage(w, "flink:1.20.2", "main@sha1:r3")
	d := w.step()
	w.expectDelete(d, "orders-green")
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, "WaitingForDeletion",
		"deleting FlinkDeployment orders-green left by an earlier transition before the new one starts")
	w.expectRequeue(d, 15*time.Second)
}
