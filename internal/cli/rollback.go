/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops rollback fbgd`: the spec of an earlier rollout, printed as the Git
// change to make or, with --apply, written to the object.

package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// rollbackFlags are the flags of `bg-gitops rollback`.
type rollbackFlags struct {
	*kubeFlags
	to            string
	fromSavepoint bool
	savepoint     string
	olderThanLast bool
	apply         bool
	repo          string
}

func newRollbackCommand() *cobra.Command {
	f := &rollbackFlags{kubeFlags: newKubeFlags()}
	cmd := &cobra.Command{Use: "rollback KIND NAME --to REVISION|#", Short: "Say how to go back to an earlier rollout, in Git", Args: cobra.NoArgs}
	f.addFlags(cmd.PersistentFlags())
	sub := &cobra.Command{
		Use:     "fbgd NAME --to REVISION|#",
		Aliases: fbgdKind.aliases,
		Short:   "Print the change that rolls a FlinkBlueGreenDeployment back to an earlier revision",
		Long: `Git stays the source of truth: rollback prints the change to commit, and the controller rolls it out
like any other. --to takes a revision (a commit hash of 7 digits or more) or the # of a row of
` + "`bg-gitops history fbgd NAME`" + `.

With --from-savepoint the change also restarts the job from a savepoint of the job that ran that
revision: its last one (the one taken when a rollout really replaced it, or, while it runs or after
an aborted transition, the newest FlinkStateSnapshot of it), or --savepoint PATH. It lists them
with their age. A savepoint of that job older than its last one drops the state since: it is
refused unless --older-than-last is given as well. It sets
spec.template.spec.job.initialSavepointPath and a new savepointRedeployNonce, and the rollout
starts the other colour from that savepoint instead of taking a new one (SAVEPOINT_REDEPLOY).

--apply changes the cluster instead, the way Argo CD's rollback does with auto-sync off: it
renders the object at that revision from a local checkout (--repo, the source GitRepository's
path), adds the savepoint edit, and updates the FlinkBlueGreenDeployment, which the controller
then rolls out. It does so only while the source GitRepository is suspended (its next apply would
undo it otherwise): commit the same change before resuming it.`,
		Example: `  bg-gitops history fbgd orders -n flink
  bg-gitops rollback fbgd orders -n flink --to 3
  bg-gitops rollback fbgd orders -n flink --to 1a2b3c4 --from-savepoint
  # An incident, Git cannot wait: suspend, roll back on the cluster, commit the revert later
  bg-gitops suspend gitrepository jobs -n flink
  bg-gitops rollback fbgd orders -n flink --to 3 --from-savepoint --apply --repo .`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.completeNames(fbgdKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, args[0])
		},
	}
	fl := sub.Flags()
	fl.StringVar(&f.to, "to", "", "the revision (commit hash) or history # to go back to")
	fl.BoolVar(&f.fromSavepoint, "from-savepoint", false, "also restart the job from a savepoint of that revision's job")
	fl.StringVar(&f.savepoint, "savepoint", "", "the savepoint path to restart from (implies --from-savepoint)")
	fl.BoolVar(&f.olderThanLast, "older-than-last", false, "allow a --savepoint older than the last savepoint of that revision's job (its state since is lost)")
	fl.BoolVar(&f.apply, "apply", false, "update the object on the cluster to that revision's spec (only while the source GitRepository is suspended)")
	fl.StringVar(&f.repo, "repo", ".", "local Git repository holding the revision, for --apply")
	_ = sub.MarkFlagRequired("to")
	cmd.AddCommand(sub)
	return cmd
}

func (f *rollbackFlags) run(cmd *cobra.Command, name string) error {
	n, err := f.named(cmd, name)
	if err != nil {
		return err
	}
	obj, err := n.read(fbgdKind)
	if err != nil {
		return err
	}
	ctx, c := n.ctx, n.client
	p := obj.(*v1alpha1.FlinkBlueGreenDeployment)
	i, err := findEntry(p.Status.History, f.to)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("fbgd %s/%s: %w", p.Namespace, p.Name, err)}
	}
	out := cmd.OutOrStdout()
	r := p.Status.History[i]
	if _, _, err := v1alpha1.ParseRevision(r.Revision); err != nil {
		// "-" would print `git checkout - -- DIR`: the previous branch's files.
		return &exitError{code: 2, err: fmt.Errorf("fbgd %s/%s: rollout #%d has no revision (%q): it was not applied from Git "+
			"(no %s annotation), so there is no commit to go back to", p.Namespace, p.Name, i+1, r.Revision, v1alpha1.RevisionAnnotation)}
	}
	fmt.Fprintf(out, "Roll fbgd %s/%s back to %s (#%d: %s to %s, %s).\n\n", p.Namespace, p.Name, shortRevision(r.Revision), i+1, r.Kind, r.To, r.Outcome)
	dir := sourcePath(ctx, c, p)
	printGitChange(out, p, r, dir)
	var edit *specEdit
	if f.fromSavepoint || f.savepoint != "" {
		if edit, err = f.savepointEdit(n, out, p, i); err != nil {
			return err
		}
	}
	if !f.apply {
		return nil
	}
	if err := sourceSuspended(ctx, c, p); err != nil {
		return err
	}
	spec, err := specAt(f.repo, r.Revision, dir, p)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	return applyRollback(ctx, c, out, p, spec, r.Revision, edit)
}

// findEntry finds the history entry to as a # (1-based row of `history`)
// or as a revision (the latest entry of that commit).
func findEntry(h []v1alpha1.RolloutRecord, to string) (int, error) {
	if n, err := strconv.Atoi(to); err == nil && len(to) < 7 {
		if n < 1 || n > len(h) {
			return 0, fmt.Errorf("--to %d: the history has %d rollouts (see `bg-gitops history fbgd`)", n, len(h))
		}
		return n - 1, nil
	}
	want, err := resolveRevision(to, "")
	if err != nil {
		return 0, fmt.Errorf("--to %s: want a commit hash or a history #", to)
	}
	for i := len(h) - 1; i >= 0; i-- {
		if want.in(h[i].Revision) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("--to %s: no rollout of that revision in the last %d (see `bg-gitops history fbgd`)", to, len(h))
}

// savepointEdit chooses the savepoint of rollout i's job to restart from,
// prints the choice and the edit.
func (f *rollbackFlags) savepointEdit(n *named, out io.Writer, p *v1alpha1.FlinkBlueGreenDeployment, i int) (*specEdit, error) {
	ch, err := chooseSavepoints(n.ctx, n.client, p.Namespace, p.Status.History, i)
	if err != nil {
		return nil, err
	}
	rev := shortRevision(p.Status.History[i].Revision)
	path, err := ch.pick(f.savepoint, f.olderThanLast)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	ch.print(out, time.Now(), path)
	if path == "" {
		return nil, &exitError{code: 2, err: fmt.Errorf("no savepoint of the job of %s is known: pass --savepoint PATH", rev)}
	}
	e := savepointEdit(p, path)
	fmt.Fprintf(out, "\nTo restart the job from %s, change spec.template.spec.job of %s as well:\n\n%s", path, p.Name, indent(e.yaml))
	return &e, nil
}

// sourcePath is the path the source GitRepository of p renders, for the
// Git commands; a placeholder when it cannot be read.
func sourcePath(ctx context.Context, c client.Client, p *v1alpha1.FlinkBlueGreenDeployment) string {
	src := p.Annotations[v1alpha1.SourceAnnotation]
	ns, name, ok := strings.Cut(src, "/")
	if !ok {
		return "<the directory of " + p.Name + "'s manifest>"
	}
	obj, err := readObject(ctx, c, gitRepositoryKind, types.NamespacedName{Namespace: ns, Name: name})
	if err != nil {
		return "<the path of GitRepository " + src + ">"
	}
	return obj.(*v1alpha1.GitRepository).GetPath()
}

// printGitChange prints the Git commands that bring back the revision.
func printGitChange(out io.Writer, p *v1alpha1.FlinkBlueGreenDeployment, r v1alpha1.RolloutRecord, dir string) {
	sha := shortRevision(r.Revision)
	fmt.Fprintf(out, "Git is the source of truth: commit the spec of %s, and the controller rolls it out.\n\n", sha)
	fmt.Fprintf(out, "  git diff %s HEAD -- %s    # what changed since\n", sha, dir)
	fmt.Fprintf(out, "  git checkout %s -- %s\n", sha, dir)
	fmt.Fprintf(out, "  git commit -m \"Roll back %s to %s\" && git push\n", p.Name, sha)
}

// specEdit is a change of spec.template.spec.job: a restart from a
// savepoint.
type specEdit struct {
	path  string
	nonce int64
	yaml  string
}

// savepointEdit sets initialSavepointPath and a new savepointRedeployNonce.
func savepointEdit(p *v1alpha1.FlinkBlueGreenDeployment, path string) specEdit {
	nonce := int64(1)
	if j := p.Spec.Template.Spec.Job; j != nil && j.SavepointRedeployNonce != nil {
		nonce = *j.SavepointRedeployNonce + 1
	}
	return specEdit{path: path, nonce: nonce,
		yaml: fmt.Sprintf("initialSavepointPath: %s\nsavepointRedeployNonce: %d\n", path, nonce)}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// specAt renders dir of repoDir at rev and returns the spec p had there.
func specAt(repoDir, rev, dir string, p *v1alpha1.FlinkBlueGreenDeployment) (*v1alpha1.FlinkBlueGreenDeploymentSpec, error) {
	want, err := resolveRevision(rev, "")
	if err != nil {
		return nil, err
	}
	objs, _, err := renderAt(repoDir, string(want), dir, false)
	if err != nil {
		return nil, fmt.Errorf("--apply: %w (pass --repo, a checkout that holds %s)", err, want)
	}
	o := renderedObject(objs, p)
	if o == nil {
		return nil, fmt.Errorf("--apply: %s at %s renders no FlinkBlueGreenDeployment %s", dir, want, p.Name)
	}
	var old v1alpha1.FlinkBlueGreenDeployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &old); err != nil {
		return nil, fmt.Errorf("--apply: FlinkBlueGreenDeployment %s at %s: %w", p.Name, want, err)
	}
	return &old.Spec, nil
}

// renderedObject is the rendered FlinkBlueGreenDeployment that is p: of
// its name and namespace, else of its name without a namespace (the
// GitRepository's), else the only one of its name (a targetNamespace
// puts it in p's namespace).
func renderedObject(objs []*unstructured.Unstructured, p *v1alpha1.FlinkBlueGreenDeployment) *unstructured.Unstructured {
	var named []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "FlinkBlueGreenDeployment" && o.GetName() == p.Name {
			named = append(named, o)
		}
	}
	for _, ns := range []string{p.Namespace, ""} {
		for _, o := range named {
			if o.GetNamespace() == ns {
				return o
			}
		}
	}
	if len(named) == 1 {
		return named[0]
	}
	return nil
}

// applyRollback updates p to spec (and the savepoint edit) at revision rev;
// the controller rolls it out like a commit. Without an edit, the running
// savepointRedeployNonce and initialSavepointPath are kept when spec's
// would redeploy from its own (older) savepoint path: a rollback keeps the
// job's state unless --from-savepoint says otherwise. A conflict (the
// controller wrote status since p was read) is retried on a fresh read.
func applyRollback(ctx context.Context, c client.Client, out io.Writer, p *v1alpha1.FlinkBlueGreenDeployment,
	spec *v1alpha1.FlinkBlueGreenDeploymentSpec, rev string, e *specEdit) error {
	key := client.ObjectKeyFromObject(p)
	first, kept := true, false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, key, p); err != nil {
				return err
			}
		}
		first = false
		next := *spec.DeepCopy()
		if next.Template.Spec.Job == nil {
			next.Template.Spec.Job = &v1alpha1.JobSpec{}
		}
		kept = false
		if e != nil {
			nonce := savepointEdit(p, e.path).nonce
			next.Template.Spec.Job.InitialSavepointPath = e.path
			next.Template.Spec.Job.SavepointRedeployNonce = &nonce
		} else if cur := p.Spec.Template.Spec.Job; cur != nil && bluegreen.Classify(&p.Spec, &next).Type == bluegreen.DiffSavepointRedeploy {
			next.Template.Spec.Job.SavepointRedeployNonce = cur.SavepointRedeployNonce
			next.Template.Spec.Job.InitialSavepointPath = cur.InitialSavepointPath
			kept = true
		}
		p.Spec = next
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[v1alpha1.RevisionAnnotation] = rev
		return c.Update(ctx, p)
	})
	if err != nil {
		return fmt.Errorf("update fbgd %s/%s: %w", p.Namespace, p.Name, err)
	}
	if kept {
		fmt.Fprintf(out, "\nThe savepointRedeployNonce of %s would restart the job from its initialSavepointPath and drop the state since: "+
			"the running nonce and path are kept, so the job carries its state over (use --from-savepoint to choose a savepoint).\n", shortRevision(rev))
	}
	fmt.Fprintf(out, "\nfbgd %s/%s: updated to the spec of %s; commit the same change before you resume its GitRepository.\n",
		p.Namespace, p.Name, shortRevision(rev))
	return nil
}

// sourceSuspended refuses (exit 2) unless the GitRepository that applies
// p is suspended; an object no GitRepository applies is the user's.
func sourceSuspended(ctx context.Context, c client.Client, p *v1alpha1.FlinkBlueGreenDeployment) error {
	src := p.Annotations[v1alpha1.SourceAnnotation]
	if src == "" {
		return nil
	}
	ns, name, _ := strings.Cut(src, "/")
	key := types.NamespacedName{Namespace: ns, Name: name}
	obj, err := readObject(ctx, c, gitRepositoryKind, key)
	if err != nil {
		return err
	}
	if gr := obj.(*v1alpha1.GitRepository); !gr.IsSuspended() {
		return &exitError{code: exitCannotAct, err: fmt.Errorf("refusing to change fbgd %s/%s: GitRepository %s is not suspended and its next apply would undo the change; "+
			"commit it instead, or run `bg-gitops suspend gitrepository %s -n %s` first", p.Namespace, p.Name, src, name, ns)}
	}
	return nil
}
