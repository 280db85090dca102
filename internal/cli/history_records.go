/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// stateRecord is one state record of a FlinkBlueGreenDeployment that is
// gone, as `bg-gitops history` prints it.
type stateRecord struct {
	Name     string    `json:"name"`
	Job      string    `json:"job,omitempty"`
	JobID    string    `json:"jobID,omitempty"`
	Revision string    `json:"revision,omitempty"`
	State    string    `json:"state,omitempty"`
	Path     string    `json:"path,omitempty"`
	Created  time.Time `json:"created"`
}

// printRecords prints the state records of n's name, newest first; with
// none, gone (the NotFound of the object) is the answer.
func printRecords(out io.Writer, n *named, format string, gone error) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK.GroupVersion().WithKind("FlinkStateSnapshotList"))
	err := n.client.List(n.ctx, list, client.InNamespace(n.key.Namespace),
		client.MatchingLabels{v1alpha1.FlinkBlueGreenDeploymentLabel: n.key.Name, v1alpha1.StateRecordLabel: "true"})
	if err != nil || len(list.Items) == 0 {
		return notFoundOr(fbgdKind, n.key, gone)
	}
	recs := make([]stateRecord, 0, len(list.Items))
	for i := range list.Items {
		recs = append(recs, recordOf(&list.Items[i]))
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Created.After(recs[j].Created) })
	return printAs(out, recs, format, func() string { return recordsTable(n, recs) })
}

func recordOf(u *unstructured.Unstructured) stateRecord {
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	a := u.GetAnnotations()
	r := stateRecord{Name: u.GetName(), Job: a[v1alpha1.JobAnnotation], JobID: a[v1alpha1.JobIDAnnotation],
		Revision: a[v1alpha1.RevisionAnnotation], State: str("status", "state"), Path: str("status", "path"),
		Created: u.GetCreationTimestamp().Time}
	if existing, _, _ := unstructured.NestedBool(u.Object, "spec", "savepoint", "alreadyExists"); existing {
		r.Path = str("spec", "savepoint", "path")
	}
	if r.Path == "" {
		r.Path = a[v1alpha1.LastCompletedSavepointAnnotation]
	}
	return r
}

func recordsTable(n *named, recs []stateRecord) string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "FlinkBlueGreenDeployment %s is gone. Its state is kept in %d record(s), newest first; a FlinkBlueGreenDeployment named %s created later starts from the newest:\n",
		n.key, len(recs), n.key.Name)
	tw := printers.GetNewTabWriter(&buf)
	fmt.Fprintln(tw, "RECORD\tJOB\tJOB ID\tREVISION\tSTATE\tSAVEPOINT\tTAKEN")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, orNone(r.Job), orNone(r.JobID), shortRevision(r.Revision),
			orNone(r.State), orNone(r.Path), r.Created.UTC().Format(time.RFC3339))
	}
	_ = tw.Flush()
	return buf.String()
}
