/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// conditions.go: the Ready, Reconciling and Stalled conditions a decision
// derives from its next status (summarize), and their reasons.

package bluegreen

import (
	"sort"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/conditions"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition reasons.
const (
	ReasonSucceeded    = "Succeeded"
	ReasonRolloutFail  = "RolloutFailed"
	ReasonSuspended    = "Suspended"
	ReasonJobNotReady  = "JobNotReady"
	ReasonProgressing  = "Progressing"
	ReasonInitializing = "Initializing"
)

// summarize derives Ready, Reconciling and Stalled from the next status
// and the phase. It is a function of the decision's outcome only, so an
// idle reconcile reproduces the conditions (and their transition times).
func (d *decider) summarize() {
	st := &d.st
	if st.Conditions == nil {
		st.Conditions = []metav1.Condition{}
	}
	stalled := !d.phase.progressing && st.JobStatus.State == v1alpha1.JobFailing && !st.BlueGreenState.InProgress()
	progressing := d.phase.progressing || st.BlueGreenState.InProgress()
	switch {
	case progressing:
		d.setCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, d.phaseReason(), d.phase.message)
	default:
		apimeta.RemoveStatusCondition(&st.Conditions, v1alpha1.ReconcilingCondition)
	}
	if stalled {
		d.setCondition(v1alpha1.StalledCondition, metav1.ConditionTrue, ReasonRolloutFail, st.Error)
	} else {
		apimeta.RemoveStatusCondition(&st.Conditions, v1alpha1.StalledCondition)
	}
	status, reason, msg := d.readiness(progressing, stalled)
	d.setCondition(v1alpha1.ReadyCondition, status, reason, msg)
	sort.SliceStable(st.Conditions, func(i, j int) bool { return st.Conditions[i].Type < st.Conditions[j].Type })
	if len(st.Conditions) == 0 && d.in.Parent.Status.Conditions == nil {
		st.Conditions = nil
	}
}

func (d *decider) phaseReason() string {
	if d.phase.reason == "" {
		return ReasonProgressing
	}
	return d.phase.reason
}

func (d *decider) readiness(progressing, stalled bool) (metav1.ConditionStatus, string, string) {
	st := &d.st
	switch {
	case stalled:
		return metav1.ConditionFalse, ReasonRolloutFail, st.Error
	case progressing:
		return metav1.ConditionFalse, d.phaseReason(), d.phase.message
	case st.JobStatus.State == v1alpha1.JobSuspended:
		return metav1.ConditionFalse, ReasonSuspended, "the job is suspended (spec.template.spec.job.state)"
	case st.BlueGreenState == v1alpha1.InitializingBlue:
		return metav1.ConditionFalse, ReasonInitializing, "no deployment yet"
	}
	active := d.activeChild()
	if active == nil || !active.Ready() {
		msg := "active FlinkDeployment " + st.ActiveDeployment + " is missing"
		if active != nil {
			msg = "active FlinkDeployment " + active.Name + " is not ready (" + active.describe() + ")"
		}
		return metav1.ConditionFalse, ReasonJobNotReady, msg
	}
	return metav1.ConditionTrue, ReasonSucceeded, active.Name + " runs " + revOr(st.ActiveRevision)
}

func (d *decider) activeChild() *Child {
	for _, c := range []*Child{d.in.Blue, d.in.Green} {
		if c != nil && c.Name == d.st.ActiveDeployment {
			return c
		}
	}
	return nil
}

func (d *decider) setCondition(typ string, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(&d.st.Conditions, d.p.Generation, d.now, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg,
	})
}

func findCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	return apimeta.FindStatusCondition(cs, typ)
}
