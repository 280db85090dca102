/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// What the verbs refuse before they make a request: a request the object's state
// leaves nothing to do for, or a --wait that could only time out.

package cli

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// exitNothingToDo is the exit code of a request the object's state leaves
// nothing to act on (the exitFailed family: the command ran, the outcome is
// not what was asked).
const exitNothingToDo = exitFailed

// exitCannotAct is the exit code of a --wait that could only time out: the
// object will not act on the request as it stands.
const exitCannotAct = 2

// precheck says, before a request is made, why the object cannot act on
// it; nil when it can.
type precheck func(obj client.Object, wait bool) error

// notWhileSuspended refuses `reconcile` on a GitRepository that
// spec.suspend keeps suspended: nothing the command line does lifts it,
// so the request would never be handled. Suspended by `bg-gitops
// suspend`, the request waits for the resume, and only --wait (which
// would wait its whole timeout) is refused, naming the resume.
func notWhileSuspended(obj client.Object, wait bool) error {
	gr := obj.(*v1alpha1.GitRepository)
	switch {
	case gr.Spec.Suspend:
		return specSuspended(gr, "reconcile")
	case wait && gr.IsSuspended():
		return &exitError{code: exitCannotAct, err: fmt.Errorf("gitrepository %s/%s is suspended: it is neither fetched nor applied until `bg-gitops resume gitrepository %s -n %s`",
			gr.Namespace, gr.Name, gr.Name, gr.Namespace)}
	}
	return nil
}

// resumeOverriddenBySpec refuses `resume` when spec.suspend (which resume
// does not change: it is Git's) keeps the GitRepository suspended. With
// the suspend annotation also set, a plain resume still removes it.
func resumeOverriddenBySpec(obj client.Object, wait bool) error {
	gr := obj.(*v1alpha1.GitRepository)
	if !gr.Spec.Suspend || !wait && gr.Annotations[v1alpha1.SuspendAnnotation] != "" {
		return nil
	}
	return specSuspended(gr, "resume")
}

func specSuspended(gr *v1alpha1.GitRepository, verb string) error {
	return &exitError{code: exitCannotAct, err: fmt.Errorf("gitrepository %s/%s has spec.suspend: true, which %s does not change: set it to false in Git, where the object is defined",
		gr.Namespace, gr.Name, verb)}
}

// fbgdCanAct refuses promote, abort and retry when the state leaves
// nothing for them to do, with a sentence that says the state.
func fbgdCanAct(verb string) precheck {
	return func(obj client.Object, _ bool) error {
		p := obj.(*v1alpha1.FlinkBlueGreenDeployment)
		st := p.Status
		var why string
		switch verb {
		case "promote":
			switch {
			case !st.BlueGreenState.Transitioning() || st.ActiveDeployment == "" || p.PromotionMode() != v1alpha1.PromotionManual:
				why = "there is no transition waiting for a promotion"
			case st.ActiveDeployment == treeTargetChild(p):
				why = "an in-place change of " + st.ActiveDeployment + " needs no promotion"
			}
		case "abort":
			if !st.BlueGreenState.InProgress() {
				why = "there is no transition in progress"
			}
		case "retry":
			if st.JobStatus.State != v1alpha1.JobFailing {
				why = "no rollout has failed"
			}
		}
		if why == "" {
			return nil
		}
		return &exitError{code: exitNothingToDo, err: fmt.Errorf("nothing to %s: fbgd %s/%s is %s, %s; %s",
			verb, p.Namespace, p.Name, orNone(string(st.BlueGreenState)), jobPhrase(st), why)}
	}
}
