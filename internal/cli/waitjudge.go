/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// verdict is where an object stands for a wait: a progress line, or the
// outcome (done, or err for an outcome that is not what was asked).
type verdict struct {
	line string
	done bool
	err  error
}

func failed(line, format string, args ...any) verdict {
	return verdict{line: line, err: &exitError{code: exitFailed, err: fmt.Errorf(format, args...)}}
}

// fbgdRevision judges whether a FlinkBlueGreenDeployment runs a commit.
type fbgdRevision struct {
	want commitRef
	// seen: the commit was stamped on the object during this wait, so
	// another stamp before it went live means it was superseded.
	seen bool
	done bool
}

func (j *fbgdRevision) judge(obj client.Object) verdict {
	p := obj.(*v1alpha1.FlinkBlueGreenDeployment)
	st := p.Status
	id := objectID("fbgd", p)
	stamped := p.Annotations[v1alpha1.RevisionAnnotation]
	here := j.want.in(stamped)
	j.seen = j.seen || here
	current := st.ObservedGeneration >= p.Generation
	went := j.want.in(st.ActiveRevision) || j.want.inAny(st.LiveRevisions)
	switch {
	case went && !here:
		return verdict{done: true, line: fmt.Sprintf("%s: %s went live; %s is now at %s", id, j.want, p.Name, shortRevision(stamped))}
	case j.want.in(st.ActiveRevision) && st.BlueGreenState.Active() && current && jobUp(st):
		return verdict{done: true, line: fmt.Sprintf("%s: %s is live on %s, job %s", id, j.want, st.ActiveDeployment, st.JobStatus.State)}
	case here && current && j.want.in(st.TargetRevision) && st.BlueGreenState.Active() && jobUp(st):
		return verdict{done: true, line: fmt.Sprintf("%s: %s changes nothing %s runs: %s keeps running, job %s",
			id, j.want, p.Name, st.ActiveDeployment, st.JobStatus.State)}
	case here && current && st.JobStatus.State == v1alpha1.JobFailing && j.want.in(st.TargetRevision):
		return failed(fbgdLine(p), "the rollout of %s failed: %s", j.want, orNone(st.Error))
	case here && current && stalled(st.Conditions) != "":
		return failed(fbgdLine(p), "the rollout of %s is refused: %s", j.want, stalled(st.Conditions))
	case j.seen && !here:
		return failed(fbgdLine(p), "%s was superseded by %s before it went live", j.want, shortRevision(stamped))
	case !here:
		return verdict{line: fmt.Sprintf("%s: at %s, waiting for %s to be applied", id, shortRevision(stamped), j.want)}
	}
	return verdict{line: fbgdLine(p)}
}

// jobUp: the active job runs its spec, or is suspended as asked.
func jobUp(st v1alpha1.FlinkBlueGreenDeploymentStatus) bool {
	return st.JobStatus.State == v1alpha1.JobRunning || st.JobStatus.State == v1alpha1.JobSuspended
}

// stalled is the Stalled condition's reason and message when it is True.
func stalled(conds []metav1.Condition) string {
	if s := apimeta.FindStatusCondition(conds, v1alpha1.StalledCondition); s != nil && s.Status == "True" {
		return s.Reason + ": " + s.Message
	}
	return ""
}

// fbgdLine is a progress line: state, job, active and target revision.
func fbgdLine(p *v1alpha1.FlinkBlueGreenDeployment) string {
	st := p.Status
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, job %s, active %s", objectID("fbgd", p), orNone(string(st.BlueGreenState)),
		orNone(string(st.JobStatus.State)), shortRevision(st.ActiveRevision))
	if st.BlueGreenState.InProgress() {
		fmt.Fprintf(&b, ", rolling out %s", shortRevision(st.TargetRevision))
	}
	if c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReconcilingCondition); c != nil && c.Status == "True" && c.Message != "" {
		b.WriteString(": " + c.Message)
	}
	return b.String()
}

// gitRepositoryRevision judges whether a GitRepository applied a commit.
type gitRepositoryRevision struct {
	want commitRef
	seen bool
}

func (j *gitRepositoryRevision) judge(obj client.Object) verdict {
	gr := obj.(*v1alpha1.GitRepository)
	st := gr.Status
	id := objectID("gitrepository", gr)
	fetched := ""
	if st.Artifact != nil {
		fetched = st.Artifact.Revision
	}
	j.seen = j.seen || j.want.in(fetched) || j.want.in(st.LastAttemptedRevision)
	ready := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition)
	current := ready != nil && ready.ObservedGeneration >= gr.Generation
	applied := j.want.in(st.LastAppliedRevision)
	switch {
	case applied && current && ready.Status == "True":
		return verdict{done: true, line: fmt.Sprintf("%s: applied %s", id, shortRevision(st.LastAppliedRevision))}
	case gr.IsSuspended():
		return verdict{line: id + ": suspended", err: &exitError{code: exitCannotAct,
			err: fmt.Errorf("%s is suspended: %s is not applied until `bg-gitops resume gitrepository %s -n %s`", id, j.want, gr.Name, gr.Namespace)}}
	case j.want.in(st.LastAttemptedRevision) && !applied && current && ready.Status == "False":
		return failed(id+": not ready, "+ready.Reason, "%s was not applied: %s: %s", j.want, ready.Reason, ready.Message)
	case j.seen && !applied && fetched != "" && !j.want.in(fetched):
		return failed(id+": fetched "+shortRevision(fetched), "%s was superseded by %s before it was applied", j.want, shortRevision(fetched))
	}
	return verdict{line: fmt.Sprintf("%s: fetched %s, applied %s, waiting for %s%s", id, shortRevision(fetched),
		shortRevision(st.LastAppliedRevision), j.want, progressSuffix(st.Conditions))}
}

// fbgdsOf lists the FlinkBlueGreenDeployments of a GitRepository's
// inventory (IDs are <namespace>_<name>_<group>_<kind>).
func fbgdsOf(obj client.Object) []types.NamespacedName {
	gr := obj.(*v1alpha1.GitRepository)
	if gr.Status.Inventory == nil {
		return nil
	}
	var keys []types.NamespacedName
	for _, e := range gr.Status.Inventory.Entries {
		parts := strings.Split(e.ID, "_")
		if len(parts) == 4 && parts[2] == v1alpha1.GroupVersion.Group && parts[3] == "FlinkBlueGreenDeployment" {
			keys = append(keys, types.NamespacedName{Namespace: parts[0], Name: parts[1]})
		}
	}
	return keys
}

// notFoundOr words a NotFound read; other errors pass.
func notFoundOr(k *kind, key types.NamespacedName, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s not found", k.short, key)
	}
	return err
}
