/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops get fbgd|gitrepository`: tables, and one object as YAML, JSON or a
// tree (get_tree.go), followed with --watch (get_watch.go).

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
)

// getFlags are the flags of `bg-gitops get`.
type getFlags struct {
	*kubeFlags
	output string
	watch  bool
}

func newGetCommand() *cobra.Command {
	f := &getFlags{kubeFlags: newKubeFlags()}
	cmd := &cobra.Command{
		Use:   "get KIND [NAME]",
		Short: "Show FlinkBlueGreenDeployments and GitRepositories",
		Example: `  # Where a blue/green rollout stands, as a tree redrawn on every change (a line per change without a terminal)
  bg-gitops get fbgd orders -n flink --watch

  # Every GitRepository of the cluster
  bg-gitops get gitrepository -A`,
		Args: cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	f.addFlags(pf)
	pf.StringVarP(&f.output, "output", "o", "", "output format: json or yaml (default: a table, or a tree for one FlinkBlueGreenDeployment)")
	cmd.AddCommand(newGetFBGDCommand(f), newGetGitRepositoryCommand(f))
	return cmd
}

func newGetFBGDCommand(f *getFlags) *cobra.Command {
	c := &cobra.Command{
		Use:     fbgdKind.name + " [NAME]",
		Aliases: fbgdKind.aliases,
		Short:   "Show a FlinkBlueGreenDeployment as a tree, or list them",
		Long: `With NAME: the state of the blue/green state machine, the active and target
colours with their job's state and the revision and image each runs or rolls
out, the savepoint, the deadlines that apply, both child FlinkDeployments as
the Flink operator reports them, and the last events. Without NAME: a table of
the FlinkBlueGreenDeployments.

--watch on a terminal redraws the tree on every change; elsewhere (a CI log,
a pipe) it prints one timestamped line when the state, a colour's job or the
Ready reason changes, and one for each new Warning event.`,
		Example: `  # The tree of one FlinkBlueGreenDeployment
  bg-gitops get fbgd orders -n flink

  # Follow a rollout: redraw the tree whenever the parent, a child or an event changes
  bg-gitops get fbgd orders -n flink --watch

  # The same in a CI log: a timestamped line per change
  bg-gitops get fbgd orders -n flink --watch | tee rollout.log

  # The object itself, with full revisions
  bg-gitops get fbgd orders -n flink -o yaml

  # Every FlinkBlueGreenDeployment of the cluster
  bg-gitops get fbgd -A`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: f.completeNames(fbgdKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(args); err != nil {
				return err
			}
			if len(args) == 0 {
				if f.watch {
					return errors.New("--watch needs a NAME")
				}
				return f.listFBGDs(cmd)
			}
			return f.getFBGD(cmd, args[0])
		},
	}
	f.addAllNamespaces(c.Flags())
	c.Flags().BoolVarP(&f.watch, "watch", "w", false, "follow the FlinkBlueGreenDeployment, its children and its events until Ctrl-C: the tree redrawn on a terminal, a timestamped line per change elsewhere")
	return c
}

func newGetGitRepositoryCommand(f *getFlags) *cobra.Command {
	c := &cobra.Command{
		Use:     gitRepositoryKind.name + " [NAME]",
		Aliases: gitRepositoryKind.aliases,
		Short:   "List GitRepositories: revision, suspended, ready",
		Example: `  # The GitRepositories of a namespace
  bg-gitops get gitrepository -n flink

  # Every GitRepository of the cluster
  bg-gitops get bggr -A

  # One GitRepository as YAML
  bg-gitops get gitrepository jobs -n flink -o yaml`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: f.completeNames(gitRepositoryKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(args); err != nil {
				return err
			}
			return f.getGitRepositories(cmd, args)
		},
	}
	f.addAllNamespaces(c.Flags())
	return c
}

func (f *getFlags) check(args []string) error {
	switch f.output {
	case "", "json", "yaml":
	default:
		return fmt.Errorf("unknown output format %q: want json or yaml", f.output)
	}
	if f.allNamespaces && len(args) > 0 {
		return errors.New("a NAME cannot be read across all namespaces: drop -A and name the namespace with -n")
	}
	return nil
}

// printer is the -o printer; nil for the default table or tree.
func (f *getFlags) printer() printers.ResourcePrinter {
	switch f.output {
	case "json":
		return &printers.OmitManagedFieldsPrinter{Delegate: &printers.JSONPrinter{}}
	case "yaml":
		return &printers.OmitManagedFieldsPrinter{Delegate: &printers.YAMLPrinter{}}
	}
	return nil
}

// listNamespace is the namespace to list in; "" for -A.
func (f *getFlags) listNamespace() string {
	if f.allNamespaces {
		return ""
	}
	return f.namespace()
}

func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// printObject prints obj with p, its apiVersion and kind set (a typed
// client leaves them empty, and the printers refuse an object without).
func printObject(p printers.ResourcePrinter, obj runtime.Object, out io.Writer) error {
	s := scheme.New()
	setKind := func(o runtime.Object) error {
		gvk, err := apiutil.GVKForObject(o, s)
		if err != nil {
			return err
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		return nil
	}
	obj = obj.DeepCopyObject()
	if err := setKind(obj); err != nil {
		return err
	}
	if apimeta.IsListType(obj) {
		if err := apimeta.EachListItem(obj, setKind); err != nil {
			return err
		}
	}
	return p.PrintObj(obj, out)
}

func (f *getFlags) getFBGD(cmd *cobra.Command, name string) error {
	cfg, err := f.restConfig()
	if err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: f.namespace(), Name: name}
	g := &fbgdGetter{key: key, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), printer: f.printer(),
		terminal: isTerminal(cmd.OutOrStdout())}
	if f.watch {
		return g.watch(commandContext(cmd), cfg)
	}
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	g.reader = c
	return g.once(commandContext(cmd))
}

// notFoundError is "fbgd ns/x not found" (exit 2, like every error of
// the command).
type notFoundError struct {
	short string
	key   types.NamespacedName
}

func (e *notFoundError) Error() string { return fmt.Sprintf("%s %s not found", e.short, e.key) }

func notFound(short string, key types.NamespacedName) error {
	return &notFoundError{short: short, key: key}
}

// noResources is kubectl's message for an empty list.
func noResources(errOut io.Writer, ns string) {
	if ns == "" {
		fmt.Fprintln(errOut, "No resources found")
		return
	}
	fmt.Fprintf(errOut, "No resources found in %s namespace.\n", ns)
}

func (f *getFlags) listFBGDs(cmd *cobra.Command) error {
	c, _, err := f.connect()
	if err != nil {
		return err
	}
	ns := f.listNamespace()
	list := &v1alpha1.FlinkBlueGreenDeploymentList{}
	if err := c.List(commandContext(cmd), list, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("list fbgd: %w", err)
	}
	if p := f.printer(); p != nil {
		return printObject(p, list, cmd.OutOrStdout())
	}
	if len(list.Items) == 0 {
		noResources(cmd.ErrOrStderr(), ns)
		return nil
	}
	writeFBGDTable(cmd.OutOrStdout(), list.Items, f.allNamespaces, time.Now())
	return nil
}

// writeFBGDTable is the table of `get fbgd`: JOB is the active job's state
// as the Flink operator reports it, else the parent's summary.
func writeFBGDTable(out io.Writer, items []v1alpha1.FlinkBlueGreenDeployment, withNamespace bool, now time.Time) {
	sort.Slice(items, func(i, j int) bool {
		if items[i].Namespace != items[j].Namespace {
			return items[i].Namespace < items[j].Namespace
		}
		return items[i].Name < items[j].Name
	})
	var revs []string
	for _, p := range items {
		revs = append(revs, p.Status.ActiveRevision, p.Status.TargetRevision)
	}
	short := newRevisionShortener(revs...)
	var buf bytes.Buffer
	tw := printers.GetNewTabWriter(&buf)
	if withNamespace {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tSTATE\tJOB\tACTIVE\tREVISION\tTARGET\tREADY\tAGE")
	for _, p := range items {
		st := p.Status
		job := st.RunningJobState()
		target := "-"
		if st.TargetRevision != "" && st.TargetRevision != st.ActiveRevision {
			target = short.short(st.TargetRevision)
		}
		ready := "-"
		if c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition); c != nil {
			ready = string(c.Status)
		}
		if withNamespace {
			fmt.Fprintf(tw, "%s\t", p.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, orNone(string(st.BlueGreenState)), orNone(treeClean(job)),
			orNone(st.ActiveDeployment), short.short(st.ActiveRevision), target, ready, treeAge(now, p.CreationTimestamp.Time))
	}
	_ = tw.Flush()
	_, _ = io.WriteString(out, trimLines(buf.String()))
}

func (f *getFlags) getGitRepositories(cmd *cobra.Command, args []string) error {
	c, _, err := f.connect()
	if err != nil {
		return err
	}
	ctx := commandContext(cmd)
	list := &v1alpha1.GitRepositoryList{}
	ns := f.listNamespace()
	if len(args) == 1 {
		key := types.NamespacedName{Namespace: ns, Name: args[0]}
		gr := &v1alpha1.GitRepository{}
		if err := c.Get(ctx, key, gr); err != nil {
			if apierrors.IsNotFound(err) {
				return notFound(gitRepositoryKind.short, key)
			}
			return fmt.Errorf("read %s %s: %w", gitRepositoryKind.short, key, err)
		}
		if p := f.printer(); p != nil {
			return printObject(p, gr, cmd.OutOrStdout())
		}
		list.Items = []v1alpha1.GitRepository{*gr}
	} else {
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("list gitrepository: %w", err)
		}
		if p := f.printer(); p != nil {
			return printObject(p, list, cmd.OutOrStdout())
		}
		if len(list.Items) == 0 {
			noResources(cmd.ErrOrStderr(), ns)
			return nil
		}
	}
	writeGitRepositoryTable(cmd.OutOrStdout(), list.Items, f.allNamespaces)
	return nil
}

// writeGitRepositoryTable is Flux's `flux get sources git` table.
func writeGitRepositoryTable(out io.Writer, items []v1alpha1.GitRepository, withNamespace bool) {
	sort.Slice(items, func(i, j int) bool {
		if items[i].Namespace != items[j].Namespace {
			return items[i].Namespace < items[j].Namespace
		}
		return items[i].Name < items[j].Name
	})
	var buf bytes.Buffer
	tw := printers.GetNewTabWriter(&buf)
	if withNamespace {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tREVISION\tSUSPENDED\tREADY\tMESSAGE")
	for _, gr := range items {
		rev := gr.Status.LastAppliedRevision
		if gr.Status.Artifact != nil && gr.Status.Artifact.Revision != "" {
			rev = gr.Status.Artifact.Revision
		}
		ready, msg := "Unknown", ""
		if c := apimeta.FindStatusCondition(gr.Status.Conditions, v1alpha1.ReadyCondition); c != nil {
			ready, msg = string(c.Status), c.Message
		}
		// status.suspended is what the controller acknowledged; the
		// request (spec.suspend or the annotation) shows at once.
		suspended := gr.Status.Suspended || gr.IsSuspended()
		if withNamespace {
			fmt.Fprintf(tw, "%s\t", gr.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", gr.Name, orNone(treeClean(rev)), boolColumn(suspended), ready, treeClean(msg))
	}
	_ = tw.Flush()
	_, _ = io.WriteString(out, trimLines(buf.String()))
}

func boolColumn(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
