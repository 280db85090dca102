/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops history` of a FlinkBlueGreenDeployment that is gone: the state
// records its deletion kept.

package cli

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"k8s.io/cli-runtime/pkg/printers"

	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/reconcile"
)

// stateRecord is one state record of a FlinkBlueGreenDeployment that is
// gone, as `bg-gitops history` prints it.
type stateRecord struct {
	Name     string    `json:"name"`
	Job      string    `json:"job,omitempty"`
	Revision string    `json:"revision,omitempty"`
	State    string    `json:"state,omitempty"`
	Path     string    `json:"path,omitempty"`
	Created  time.Time `json:"created"`
}

// printRecords prints the state records of n's name, newest first; with
// none, gone (the NotFound of the object) is the answer.
func printRecords(out io.Writer, n *named, format string, gone error) error {
	found, err := reconcile.Records(n.ctx, n.client, n.key.Namespace, n.key.Name)
	if err != nil || len(found) == 0 {
		return notFoundOr(fbgdKind, n.key, gone)
	}
	recs := make([]stateRecord, 0, len(found))
	for _, r := range found {
		recs = append(recs, recordOf(r))
	}
	return printAs(out, recs, format, func() string { return recordsTable(n, recs) })
}

// recordOf is what a record holds: the savepoint a later object starts
// from (its own, or the last completed one when its own did not complete).
func recordOf(r *bluegreen.Record) stateRecord {
	return stateRecord{Name: r.Name, Job: r.Job, Revision: r.Revision, State: r.State, Path: r.RestorePath(), Created: r.Created}
}

func recordsTable(n *named, recs []stateRecord) string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "FlinkBlueGreenDeployment %s is gone. Its state is kept in %d record(s), newest first; a FlinkBlueGreenDeployment named %s created later starts from the newest:\n",
		n.key, len(recs), n.key.Name)
	tw := printers.GetNewTabWriter(&buf)
	fmt.Fprintln(tw, "RECORD\tJOB\tREVISION\tSTATE\tSAVEPOINT\tTAKEN")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, orNone(r.Job), shortRevision(r.Revision),
			orNone(r.State), orNone(r.Path), r.Created.UTC().Format(time.RFC3339))
	}
	_ = tw.Flush()
	return buf.String()
}
