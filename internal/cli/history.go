/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops history fbgd`: the rollouts recorded in status.history, as a table,
// JSON or YAML.

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// historyFlags are the flags of `bg-gitops history`.
type historyFlags struct {
	*kubeFlags
	output string
}

func newHistoryCommand() *cobra.Command {
	f := &historyFlags{kubeFlags: newKubeFlags()}
	cmd := &cobra.Command{Use: "history KIND NAME", Short: "Show the past rollouts of an object", Args: cobra.NoArgs}
	f.addFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&f.output, "output", "o", "", "output format: json or yaml (default: a table)")
	cmd.AddCommand(&cobra.Command{
		Use:     "fbgd NAME",
		Aliases: fbgdKind.aliases,
		Short:   "Show the last rollouts of a FlinkBlueGreenDeployment (status.history)",
		Long: "One row per rollout, oldest first (the last " + fmt.Sprint(v1alpha1.MaxHistory) + " are kept): the revision, " +
			"the kind (First, BlueGreen, InPlace), the FlinkDeployments it went from and to, the savepoint taken of the old job, " +
			"the savepoint the new job restored from, when it started, how long it took, and its outcome. " +
			"The # column is what `bg-gitops rollback fbgd NAME --to #` takes. " +
			"Once the object is deleted, the state records its deletion kept are shown instead (see docs/spec/v1alpha1/flinkbluegreendeployments.md).",
		Example: `  bg-gitops history fbgd orders -n flink
  bg-gitops history fbgd orders -n flink -o yaml`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.completeNames(fbgdKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := f.named(cmd, args[0])
			if err != nil {
				return err
			}
			obj, err := readObject(n.ctx, n.client, fbgdKind, n.key)
			if apierrors.IsNotFound(err) {
				// Gone: what its deletion kept is its history now.
				return printRecords(cmd.OutOrStdout(), n, f.output, err)
			}
			if err != nil {
				return err
			}
			return printHistory(cmd.OutOrStdout(), obj.(*v1alpha1.FlinkBlueGreenDeployment).Status.History, f.output, time.Now())
		},
	})
	return cmd
}

// printHistory writes the history as a table, or as JSON or YAML.
func printHistory(out io.Writer, h []v1alpha1.RolloutRecord, format string, now time.Time) error {
	return printAs(out, h, format, func() string { return historyTable(h, now) })
}

// printAs writes v as JSON or YAML, or, with no format, as table renders it.
func printAs(out io.Writer, v any, format string, table func() string) error {
	switch format {
	case "json":
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, string(data))
		return err
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	case "":
		_, err := io.WriteString(out, table())
		return err
	}
	return &exitError{code: 2, err: fmt.Errorf("-o %s: want json or yaml", format)}
}

// historyTable renders the history as kubectl renders a table.
func historyTable(h []v1alpha1.RolloutRecord, now time.Time) string {
	if len(h) == 0 {
		return "No rollouts recorded yet.\n"
	}
	var buf bytes.Buffer
	tw := printers.GetNewTabWriter(&buf)
	fmt.Fprintln(tw, "#\tREVISION\tKIND\tFROM\tTO\tSAVEPOINT\tRESTORED FROM\tSTARTED\tTOOK\tOUTCOME\tREASON")
	for i, r := range h {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, shortRevision(r.Revision), r.Kind,
			orNone(r.From), r.To, orNone(r.SavepointPath), orNone(r.RestoredFrom),
			r.StartedAt.UTC().Format(time.RFC3339), took(r, now), r.Outcome, orNone(r.Reason))
	}
	_ = tw.Flush()
	return buf.String()
}

// took is how long a rollout took, or has been running.
func took(r v1alpha1.RolloutRecord, now time.Time) string {
	end := now
	if r.FinishedAt != nil {
		end = r.FinishedAt.Time
	}
	d := end.Sub(r.StartedAt.Time).Round(time.Second)
	if r.FinishedAt == nil {
		return d.String() + " so far"
	}
	return d.String()
}
