/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// What `bg-gitops get fbgd NAME --watch` prints without a terminal (a CI log,
// `| tee`): one timestamped line per change a user cares about, in the words
// of `wait`'s progress lines, instead of a whole tree.

package cli

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// watchLine is where the object stands, in one line that changes only
// when something a user cares about does: the state, the job that runs
// and what is rolled out (fbgdJobSummary), each colour's job state, and
// the Ready condition's status and reason. Nothing in it moves with time
// or with a resourceVersion, so an unchanged line is not printed again.
func watchLine(v fbgdView) string {
	p, st := v.Parent, v.Parent.Status
	revs := newRevisionShortener(treeRevisions(v)...)
	line := objectID(fbgdKind.short, p) + ": " + orNone(string(st.BlueGreenState)) + ", " + fbgdJobSummary(p, revs.short)
	var colours []string
	for _, c := range v.Children {
		colours = append(colours, watchChild(c))
	}
	if len(colours) > 0 {
		line += "; " + strings.Join(colours, ", ")
	}
	if c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition); c != nil {
		line += "; Ready " + string(c.Status) + ", " + treeClean(c.Reason)
	}
	return line
}

// watchChild is a FlinkDeployment's job state, as the tree's colour line
// says it: "job-green RECONCILING", "job-blue RUNNING (deleting)".
func watchChild(c *unstructured.Unstructured) string {
	s := c.GetName() + " " + orNone(treeClean(treeString(c, "status", "jobStatus", "state")))
	var notes []string
	if c.GetDeletionTimestamp() != nil {
		notes = append(notes, "deleting")
	}
	if treeString(c, "spec", "job", "state") == v1alpha1.JobStateSuspended {
		notes = append(notes, "suspended")
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return s
}

// watchWarning is the line of a Warning event: why a rollout failed or
// waits is said once, when it happens.
func watchWarning(id string, e corev1.Event) string {
	return id + ": " + treeClean(e.Type) + " " + treeClean(e.Reason) + ": " + treeClean(e.Message)
}

// eventKey identifies an event across reads (a repeated event keeps its
// object, and is not news).
func eventKey(e corev1.Event) string {
	if e.UID != "" {
		return string(e.UID)
	}
	return e.Namespace + "/" + e.Name
}
