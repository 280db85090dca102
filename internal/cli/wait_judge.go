/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// How `bg-gitops wait` judges where an object stands on the commit it waits for:
// live, on its way, or failed.

package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
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
	targeted := j.want.in(st.TargetRevision)
	// pending: a rollout waits (a closed rollout window, a leftover
	// being deleted) or runs; the state may say ACTIVE and RUNNING meanwhile.
	pending := st.BlueGreenState.InProgress() || reconcilingTrue(st.Conditions)
	// A retry the controller has not read yet replaces the failure the
	// status still reports.
	retrying := p.Annotations[v1alpha1.RetryRequestedAtAnnotation] != "" &&
		p.Annotations[v1alpha1.RetryRequestedAtAnnotation] != st.LastHandledRetryAt
	switch {
	case went && !here:
		return verdict{done: true, line: fmt.Sprintf("%s: %s went live; %s is now at %s", id, j.want, p.Name, shortRevision(stamped))}
	case j.want.in(st.ActiveRevision) && st.BlueGreenState.Active() && current && jobUp(st):
		return verdict{done: true, line: fmt.Sprintf("%s: %s is live on %s, job %s", id, j.want, st.ActiveDeployment, st.JobStatus.State)}
	case here && current && !pending && st.BlueGreenState.Active() && jobUp(st) && (targeted || specHandled(p)):
		// The spec of this commit is what runs: the controller made it
		// the target and found nothing to roll out, or the commit left the
		// spec alone (only the revision annotation changed, which neither
		// bumps the generation nor moves targetRevision).
		return verdict{done: true, line: fmt.Sprintf("%s: %s changes nothing %s runs: %s keeps running, job %s",
			id, j.want, p.Name, st.ActiveDeployment, st.JobStatus.State)}
	case here && current && targeted && st.BlueGreenState == v1alpha1.InitializingBlue && st.JobStatus.State == v1alpha1.JobSuspended:
		return verdict{done: true, line: fmt.Sprintf("%s: %s is suspended as asked: no FlinkDeployment is started", id, j.want)}
	case retrying && (here || targeted):
		return verdict{line: fbgdLine(p) + " (retry requested)"}
	case current && targeted && st.JobStatus.State == v1alpha1.JobFailing:
		// Also when a later commit that leaves the spec alone is stamped
		// since: the rollout that failed is this commit's.
		return failed(fbgdLine(p), "the rollout of %s failed: %s", j.want, orNone(st.Error))
	case here && current && stalled(st.Conditions) != "":
		return failed(fbgdLine(p), "the rollout of %s is refused: %s", j.want, stalled(st.Conditions))
	case !here && targeted && pending:
		// A later commit is stamped, but the controller still rolls this
		// one out (the later one leaves the spec alone, or its change waits
		// for this rollout, or it is not observed yet).
		return verdict{line: fbgdLine(p)}
	case j.seen && !here:
		return failed(fbgdLine(p), "%s was superseded by %s before it went live", j.want, shortRevision(stamped))
	case !here:
		return verdict{line: fmt.Sprintf("%s: at %s, waiting for %s to be applied", id, shortRevision(stamped), j.want)}
	}
	return verdict{line: fbgdLine(p)}
}

// reconcilingTrue reports a Reconciling condition that is True.
func reconcilingTrue(conds []metav1.Condition) bool {
	c := apimeta.FindStatusCondition(conds, v1alpha1.ReconcilingCondition)
	return c != nil && c.Status == metav1.ConditionTrue
}

// specHandled reports whether p's spec is the one the controller last
// acted on (status.lastReconciledSpec, {"spec": ...}) as far as its
// children are concerned: nothing is left to roll out for it.
func specHandled(p *v1alpha1.FlinkBlueGreenDeployment) bool {
	var last struct {
		Spec v1alpha1.FlinkBlueGreenDeploymentSpec `json:"spec"`
	}
	if p.Status.LastReconciledSpec == "" || json.Unmarshal([]byte(p.Status.LastReconciledSpec), &last) != nil ||
		last.Spec.Template.Spec.Job == nil {
		return false
	}
	return bluegreen.Classify(&last.Spec, &p.Spec).Type == bluegreen.DiffIgnore
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

// fbgdLine is a progress line: the state, then the job in the words of
// the tree's Job: line (fbgdJobSummary).
func fbgdLine(p *v1alpha1.FlinkBlueGreenDeployment) string {
	st := p.Status
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, %s", objectID("fbgd", p), orNone(string(st.BlueGreenState)), fbgdJobSummary(p, shortRevision))
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
	case applied && current:
		// Applied; what made Ready False came after (a later commit that
		// failed, a fetch that fails now): the commit is on the cluster.
		return verdict{done: true, line: fmt.Sprintf("%s: applied %s (not ready since: %s)", id, shortRevision(st.LastAppliedRevision), ready.Reason)}
	case applied && gr.IsSuspended():
		// Applied before it was suspended: what is applied stays.
		return verdict{done: true, line: fmt.Sprintf("%s: applied %s (suspended since)", id, shortRevision(st.LastAppliedRevision))}
	case gr.IsSuspended():
		return verdict{line: id + ": suspended", err: &exitError{code: exitCannotAct,
			err: fmt.Errorf("%s is suspended: %s is not applied until `bg-gitops resume gitrepository %s -n %s`", id, j.want, gr.Name, gr.Namespace)}}
	case j.want.in(st.LastAttemptedRevision) && !applied && current && ready.Status == "False" && !reconcilingTrue(st.Conditions):
		// Reconciling True: the commit is being applied, and Ready still
		// says how the previous reconcile ended.
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
