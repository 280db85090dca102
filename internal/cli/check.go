/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops check`: the command, the verdict of one check and the report; the
// checks themselves are in check_*.go.

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkState is the verdict of one check.
type checkState int

const (
	checkOK checkState = iota
	// checkUnknown: the facts could not be read (permissions, an operator
	// installed some other way); it does not fail the command.
	checkUnknown
	checkFailed
)

var checkMarks = map[checkState]string{checkOK: "✔", checkUnknown: "?", checkFailed: "✗"}

// checkLine is one line of `bg-gitops check` and, unless the check
// passed, what to do about it.
type checkLine struct {
	state checkState
	text  string
	fix   string
}

func passed(format string, a ...any) checkLine {
	return checkLine{state: checkOK, text: fmt.Sprintf(format, a...)}
}

func failing(fix, format string, a ...any) checkLine {
	return checkLine{state: checkFailed, text: fmt.Sprintf(format, a...), fix: fix}
}

func unsure(fix, format string, a ...any) checkLine {
	return checkLine{state: checkUnknown, text: fmt.Sprintf(format, a...), fix: fix}
}

// cannotTell is the line of a check whose facts the API server refused or
// could not give.
func cannotTell(what string, err error) checkLine {
	fix := ""
	if apierrors.IsForbidden(err) {
		fix = "run the check with an identity that may read it (a cluster admin), or ask one to"
	}
	return unsure(fix, "%s: unknown (%v)", what, err)
}

// checker holds what the checks share: the cluster, the namespace of -n
// ("" without), and what earlier checks found.
type checker struct {
	c            client.Client
	ns           string
	controllerNS string
	http         *http.Client
	now          time.Time

	operators   []*flinkOperator
	controllers []*controllerDeployment
}

func newCheckCommand() *cobra.Command {
	kf := newKubeFlags()
	var controllerNS string
	cmd := &cobra.Command{
		Use:   "check [-n NAMESPACE]",
		Short: "Check that the cluster is ready for bg-gitops (and a namespace for its jobs)",
		Long: `Check, one line each, that the cluster is ready for bg-gitops: the Flink operator's CRDs and
the operator, the bg-gitops CRDs (the same as this CLI's), the controller (available, one
replica leading) and its webhook receiver. With -n, also that namespace: the Flink operator
watches it, the ServiceAccounts its jobs and its GitRepositories' applies use exist, and the
push webhook URL of each GitRepository answers.

✔ passed, ✗ failed (the next line says what to do), ? could not be told (permissions, or
something installed another way). Exit code: 0 nothing failed, 1 something failed,
2 the cluster could not be reached.`,
		Example: `  bg-gitops check
  bg-gitops check -n flink`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := kf.connect()
			if err != nil {
				return err
			}
			if err := reachable(kf); err != nil {
				return err
			}
			if !cmd.Flags().Changed("namespace") {
				ns = ""
			}
			k := &checker{c: c, ns: ns, controllerNS: controllerNS, http: &http.Client{Timeout: 5 * time.Second}, now: time.Now()}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return reportChecks(cmd.OutOrStdout(), k.run(ctx))
		},
	}
	kf.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&controllerNS, "controller-namespace", "", "namespace of the controller's Deployment; any namespace when empty")
	return cmd
}

// reachable asks the API server for its version (which any identity it
// accepts may read): a cluster that does not answer, or that refuses the
// credentials, is exit code 2, not a list of "could not tell".
func reachable(kf *kubeFlags) error {
	cfg, err := kf.restConfig()
	if err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = versionTimeout
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := dc.ServerVersion(); err != nil {
		return fmt.Errorf("cannot reach the cluster at %s: %w", cfg.Host, err)
	}
	return nil
}

// run runs the checks in order: later ones use what earlier ones found.
func (k *checker) run(ctx context.Context) []checkLine {
	steps := []func(context.Context) []checkLine{k.flinkCRDs, k.flinkOperator, k.operatorSnapshots, k.crds, k.controller, k.leader, k.receiver}
	if k.ns != "" {
		steps = append(steps, k.namespace)
	}
	var lines []checkLine
	for _, step := range steps {
		lines = append(lines, step(ctx)...)
	}
	return lines
}

// reportChecks prints the lines; a failed check makes the exit code 1.
func reportChecks(w io.Writer, lines []checkLine) error {
	failures := 0
	for _, l := range lines {
		fmt.Fprintf(w, "%s %s\n", checkMarks[l.state], l.text)
		if l.fix != "" && l.state != checkOK {
			fmt.Fprintf(w, "    → %s\n", l.fix)
		}
		if l.state == checkFailed {
			failures++
		}
	}
	if failures > 0 {
		return &exitError{code: 1, err: errors.New("some checks failed")}
	}
	return nil
}
