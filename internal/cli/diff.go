/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops diff`: what a pull request changes, and the blue/green action each
// change causes, as text, Markdown or JSON.

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"bggitops.dev/bg-gitops/internal/review"
)

type diffFlags struct {
	repo             string
	base             string
	head             string
	path             string
	format           string
	allowRemoteBases bool
	cluster          bool
	kubeconfig       string
	source           string
}

// errChanges is returned (exit code 1) when the diff is not empty.
var errChanges = errors.New("changes found")

func newDiffCommand() *cobra.Command {
	f := &diffFlags{}
	cmd := &cobra.Command{
		Use:   "diff --repo DIR --base REF --head REF --path PATH",
		Short: "Show what a pull request changes and what the controller will do with each Flink job",
		Long: "Render PATH at the base and head refs of a local repository and report every object added,\n" +
			"changed or removed; for each FlinkBlueGreenDeployment, the action the controller will take\n" +
			"(blue/green transition, in-place patch, suspend, resume, savepoint redeploy or nothing).\n" +
			"Secret values are masked. With --cluster the head is compared with the live cluster through\n" +
			"a server-side dry-run apply instead of with the base ref, so drift shows too.\n\n" +
			"Exit status: 0 no change, 1 changes, 2 error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDiff(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", ".", "local Git repository (a checkout or a bare repository)")
	fl.StringVar(&f.base, "base", "", "base ref (the pull request's target branch, e.g. origin/main)")
	fl.StringVar(&f.head, "head", "HEAD", "head ref (the pull request's branch or merge ref)")
	fl.StringVar(&f.path, "path", "", "kustomization directory, relative to the repository root")
	fl.StringVar(&f.format, "format", "text", "output format: text, markdown or json")
	fl.BoolVar(&f.allowRemoteBases, "allow-remote-bases", false, "allow kustomize remote bases and resources")
	fl.BoolVar(&f.cluster, "cluster", false, "compare the head with the live cluster (server-side dry-run) instead of the base ref")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig for --cluster (default: $KUBECONFIG, ~/.kube/config or in-cluster)")
	fl.StringVar(&f.source, "source", "", "with --cluster: the GitRepository (NAMESPACE/NAME) that applies --path, whose inventory tells what would be pruned and whose spec.targetNamespace places objects without a namespace (default: the one the live objects name in bggitops.dev/source)")
	_ = cmd.MarkFlagRequired("path")
	return cmd
}

func runDiff(cmd *cobra.Command, f *diffFlags) error {
	write, err := writerFor(f.format, cmd.OutOrStdout())
	if err != nil {
		return err
	}
	if !f.cluster && f.base == "" {
		return errors.New("--base is required (or --cluster to compare with the live cluster)")
	}
	report, err := buildReport(cmd, f)
	if err != nil {
		return err
	}
	report.Path = f.path
	warnUncommitted(cmd.ErrOrStderr(), f.repo, f.path)
	if err := write(report); err != nil {
		return err
	}
	if report.HasChanges() {
		return &exitError{code: 1, err: errChanges}
	}
	return nil
}

// buildReport renders the head and compares it with the base ref or the
// cluster.
func buildReport(cmd *cobra.Command, f *diffFlags) (*review.Report, error) {
	head, headSHA, err := renderAt(f.repo, f.head, f.path, f.allowRemoteBases)
	if err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	if f.cluster {
		return clusterReport(cmd.Context(), f, head, review.Revision{Ref: f.head, SHA: headSHA}, cmd.ErrOrStderr())
	}
	base, baseSHA, err := renderAt(f.repo, f.base, f.path, f.allowRemoteBases)
	if err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}
	r, err := review.Compare(base, head)
	if err != nil {
		return nil, err
	}
	setChecks(r, nil)
	r.Base = review.Revision{Ref: f.base, SHA: baseSHA}
	r.Head = review.Revision{Ref: f.head, SHA: headSHA}
	return r, nil
}

// writerFor returns the writer of a format; text is coloured only on a
// terminal.
func writerFor(format string, w io.Writer) (func(*review.Report) error, error) {
	switch format {
	case "text", "":
		colour := isTerminal(w)
		return func(r *review.Report) error { return review.WriteText(w, r, colour) }, nil
	case "markdown", "md":
		return func(r *review.Report) error { return review.WriteMarkdown(w, r) }, nil
	case "json":
		return func(r *review.Report) error { return review.WriteJSON(w, r) }, nil
	}
	return nil, fmt.Errorf("--format %q: want text, markdown or json", format)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// warnUncommitted says, on stderr, when the working tree of repo has
// changes under path that are not committed: diff compares commits, and
// a reviewer would otherwise take the edits for compared. A bare
// repository, or one go-git cannot read the status of, says nothing.
func warnUncommitted(w io.Writer, repo, dir string) {
	r, err := git.PlainOpenWithOptions(repo, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return
	}
	wt, err := r.Worktree()
	if err != nil {
		return
	}
	st, err := wt.Status()
	if err != nil {
		return
	}
	// As the renderer reads it: "./overlays/prod/" is overlays/prod, "." the root.
	prefix := path.Clean("/" + filepath.ToSlash(dir))[1:] + "/"
	if prefix == "/" {
		prefix = ""
	}
	var n int
	for file, s := range st {
		if strings.HasPrefix(file, prefix) && (s.Worktree != git.Unmodified || s.Staging != git.Unmodified) {
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "warning: %d file(s) under %s have uncommitted changes; diff compares commits, not the working tree\n", n, dir)
	}
}
