/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// plan.go: `bg-gitops plan gitrepository NAME --pr N`, the pull-request plan
// of the cluster (prplan.Plan) for a pull request's head, printed.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/status"
)

type planFlags struct {
	kube   *kubeFlags
	pr     int64
	format string
	// allowFileURLs: the GitRepository may name a file:// URL (local and
	// test setups); off, a tenant's file:// URL cannot make this CLI read
	// its user's disk.
	allowFileURLs bool
}

// errPlanFailed is exit 1: the plan says the change fails.
var errPlanFailed = errors.New("the plan fails")

func newPlanCommand() *cobra.Command {
	plan := &cobra.Command{
		Use:   "plan",
		Short: "Print what a pull request will do to the running jobs, as the controller plans it",
	}
	f := &planFlags{kube: newKubeFlags()}
	cmd := &cobra.Command{
		Use:     "gitrepository NAME --pr N",
		Aliases: gitRepositoryKind.aliases,
		Short:   "Plan pull request N of a GitRepository against the live cluster (nothing is applied)",
		Long: "Fetches the pull request's head, renders it, and compares it with the live objects by a server-side " +
			"dry-run as the GitRepository's spec.serviceAccountName, with what each FlinkBlueGreenDeployment's live " +
			"state adds. Exit 0: the plan succeeds, 1: it fails (refused, or a job stops without a savepoint), 2: error.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.kube.completeNames(gitRepositoryKind),
		RunE:              func(cmd *cobra.Command, args []string) error { return runPlan(cmd, f, args[0]) },
	}
	f.kube.addFlags(cmd.Flags())
	cmd.Flags().Int64Var(&f.pr, "pr", 0, "the pull (merge) request's number")
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text, markdown or json")
	cmd.Flags().BoolVar(&f.allowFileURLs, source.FlagAllowFileURLs, false, "allow a file:// git URL, which reads a repository on this machine's disk (local and test setups only)")
	_ = cmd.MarkFlagRequired("pr")
	plan.AddCommand(cmd)
	return plan
}

func runPlan(cmd *cobra.Command, f *planFlags, name string) error {
	if f.format != "text" && f.format != "markdown" && f.format != "json" {
		return fmt.Errorf("--format %q: want text, markdown or json", f.format)
	}
	if f.pr <= 0 {
		return fmt.Errorf("--pr %d: want a pull request's number", f.pr)
	}
	n, err := f.kube.named(cmd, name)
	if err != nil {
		return err
	}
	obj, err := n.read(gitRepositoryKind)
	if err != nil {
		return err
	}
	gr := obj.(*v1alpha1.GitRepository)
	res, err := planPR(n.ctx, f, n.client, gr, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if err := writePlan(cmd.OutOrStdout(), f.format, res, gr); err != nil {
		return err
	}
	if res.Outcome() != v1alpha1.PlanSucceeded {
		return &exitError{code: 1, err: errPlanFailed}
	}
	return nil
}

// planPR fetches and renders the head of pull request f.pr and plans it.
func planPR(ctx context.Context, f *planFlags, c client.Client, gr *v1alpha1.GitRepository, note io.Writer) (*prplan.Result, error) {
	ref, err := prplan.HeadRef(gr, f.pr)
	if err != nil {
		return nil, err
	}
	fetched, err := fetchHead(ctx, c, gr, ref, f.allowFileURLs, note)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(fetched.Dir)
	head, err := finishedHead(c, gr, fetched)
	if err != nil {
		return nil, err
	}
	applier, err := applierFor(f.kube, gr, note)
	if err != nil {
		return nil, err
	}
	res, err := prplan.Plan(ctx, prplan.Input{
		GitRepository: gr, Head: head, HeadRevision: fetched.Revision, Applier: applier, Reader: c, Now: time.Now(),
		PullRequest: status.PullRequest{Number: f.pr, HeadSHA: fetched.Commit, HeadRef: ref},
		CheckChild:  reconcile.CheckChild, ObserveChild: reconcile.ObserveChild,
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// fetchHead fetches ref in-process into a temporary directory, with the
// GitRepository's credentials when this identity may read them.
func fetchHead(ctx context.Context, c client.Client, gr *v1alpha1.GitRepository, ref string, allowFileURLs bool, note io.Writer) (source.Result, error) {
	dir, err := os.MkdirTemp("", "bg-gitops-plan-")
	if err != nil {
		return source.Result{}, err
	}
	auth, err := gitAuth(ctx, c, gr, note)
	if err != nil {
		os.RemoveAll(dir)
		return source.Result{}, err
	}
	// The URL is the tenant's: a file:// one would read this user's disk,
	// so it is allowed only when asked for.
	res, err := source.Fetch(ctx, source.Options{URL: gr.Spec.URL, Ref: v1alpha1.GitRepositoryRef{Name: ref}, Auth: auth, Dir: dir, AllowFileURLs: allowFileURLs})
	if err != nil {
		os.RemoveAll(dir)
		return source.Result{}, fmt.Errorf("fetch %s of %s: %w", ref, source.SafeURL(gr.Spec.URL), err)
	}
	return res, nil
}

// gitAuth reads spec.secretRef; one this identity may not read is noted,
// and the fetch goes without.
func gitAuth(ctx context.Context, c client.Client, gr *v1alpha1.GitRepository, note io.Writer) (*source.Auth, error) {
	if gr.Spec.SecretRef == nil {
		return nil, nil
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: gr.Namespace, Name: gr.Spec.SecretRef.Name}, sec); err != nil {
		fmt.Fprintf(note, "note: secret %s/%s not readable (%v): fetching without credentials\n", gr.Namespace, gr.Spec.SecretRef.Name, err)
		return nil, nil
	}
	return source.AuthFromSecret(sec.Data, gr.Spec.URL)
}

// finishedHead renders the checkout in-process and finishes it as the
// controller does before an apply (render.Finish).
func finishedHead(c client.Client, gr *v1alpha1.GitRepository, fetched source.Result) ([]*unstructured.Unstructured, error) {
	raw, err := render.Build(fetched.Dir, gr.GetPath(), render.Options{Revision: fetched.Revision, Source: gr.SourceValue(), Tenant: gr.Namespace})
	if err != nil {
		return nil, fmt.Errorf("render %s at %s: %w", gr.GetPath(), fetched.Revision, err)
	}
	t := render.Target{Revision: fetched.Revision, Source: gr.SourceValue(), Namespace: gr.Spec.TargetNamespace, Path: gr.GetPath()}
	return render.Finish(raw, t, prplan.Scopes(c))
}

// applierFor is a client that impersonates the GitRepository's
// spec.serviceAccountName, as apply does; without one, the user's own.
func applierFor(k *kubeFlags, gr *v1alpha1.GitRepository, note io.Writer) (client.Client, error) {
	cfg, err := k.restConfig()
	if err != nil {
		return nil, err
	}
	if sa := gr.Spec.ServiceAccountName; sa != "" {
		cfg = rest.CopyConfig(cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + gr.Namespace + ":" + sa}
	} else {
		fmt.Fprintf(note, "note: gitrepository %s/%s has no spec.serviceAccountName: the dry-run runs as your own identity, not the controller's default\n", gr.Namespace, gr.Name)
	}
	return newClient(cfg)
}

// writePlan prints the plan in format.
func writePlan(w io.Writer, format string, res *prplan.Result, gr *v1alpha1.GitRepository) error {
	var out string
	switch format {
	case "markdown":
		out = res.Markdown(fmt.Sprintf("<!-- bg-gitops/plan/%s/%s -->", gr.Namespace, gr.Name))
	case "json":
		data, err := json.MarshalIndent(struct {
			Outcome string `json:"outcome"`
			Summary string `json:"summary"`
			*prplan.Result
		}{res.Outcome(), res.Summary(), res}, "", "  ")
		if err != nil {
			return err
		}
		out = string(data) + "\n"
	default:
		out = res.Text()
	}
	_, err := io.WriteString(w, out)
	return err
}
