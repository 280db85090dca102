/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops wait fbgd|gitrepository --for-revision`: waits until a commit is
// applied and its jobs run it, a CI gate for a push.

package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitFlags are the flags of `bg-gitops wait`.
type waitFlags struct {
	*kubeFlags
	revision string
	repo     string
	timeout  timeoutFlag
	rollouts bool
}

// exitCodesHelp is the exit-code contract of every command that waits.
const exitCodesHelp = `Exit codes: 0 the revision is live (its job RUNNING, or suspended as asked); 3 its rollout
aborted or failed, its sync failed, or a later revision replaced it before it went live (the
reason is printed); 4 the timeout passed; 2 a usage or connection error, or a wait that could
only time out (a suspended GitRepository, a local commit not pushed to its URL).`

func newWaitCommand() *cobra.Command {
	f := &waitFlags{kubeFlags: newKubeFlags(), timeout: timeoutFlag{auto: true}}
	cmd := &cobra.Command{
		Use:   "wait KIND NAME --for-revision REV",
		Short: "Wait until a Git revision is live: a CI gate for a push",
		Long: "Wait until a commit is applied and its FlinkBlueGreenDeployments run it.\n\n" +
			"Without a terminal one timestamped line is printed per change; the last line says the outcome.\n\n" + exitCodesHelp,
		Args: cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	f.addFlags(pf)
	pf.StringVar(&f.revision, "for-revision", "", "the commit to wait for: a hash (7+ digits), main@sha1:<hex>, or HEAD or another ref of the local repository (--repo)")
	pf.StringVar(&f.repo, "repo", ".", "local Git repository in which --for-revision is resolved when it is a ref")
	pf.Var(&f.timeout, "timeout", timeoutHelp)
	cmd.AddCommand(f.fbgdCommand(), f.gitRepositoryCommand())
	return cmd
}

func (f *waitFlags) fbgdCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "fbgd NAME --for-revision REV",
		Aliases: fbgdKind.aliases,
		Short:   "Wait until a revision is active on a FlinkBlueGreenDeployment and its job RUNNING",
		Example: `  # In CI, after the push: wait for the commit to run, as long as the job's own timers allow
  bg-gitops wait fbgd orders -n flink --for-revision HEAD --timeout auto`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.completeNames(fbgdKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, fbgdKind, args[0])
		},
	}
}

func (f *waitFlags) gitRepositoryCommand() *cobra.Command {
	c := &cobra.Command{
		Use:     "gitrepository NAME --for-revision REV [--rollouts]",
		Aliases: gitRepositoryKind.aliases,
		Short:   "Wait until a GitRepository applied a revision (and, with --rollouts, its jobs run it)",
		Example: `  # Applied, and every FlinkBlueGreenDeployment of its inventory runs it
  bg-gitops wait gitrepository jobs -n flink --for-revision "$(git rev-parse HEAD)" --rollouts`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.completeNames(gitRepositoryKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, gitRepositoryKind, args[0])
		},
	}
	c.Flags().BoolVar(&f.rollouts, "rollouts", false, "also wait for every FlinkBlueGreenDeployment of its inventory to run the revision")
	return c
}

func (f *waitFlags) run(cmd *cobra.Command, k *kind, name string) error {
	want, err := resolveRevision(f.revision, f.repo)
	if err != nil {
		return err
	}
	n, err := f.named(cmd, name)
	if err != nil {
		return err
	}
	obj, err := n.read(k)
	if err != nil {
		return err
	}
	ctx, c, key := n.ctx, n.client, n.key
	if isLocalRef(f.revision) {
		if err := refuseUnreachable(ctx, c, obj, f.repo, want); err != nil {
			return err
		}
	}
	b, err := f.timeout.budgetFor(time.Now(), obj)
	if err != nil {
		return err
	}
	w := &revisionWait{client: c, want: want, progress: newProgress(cmd.OutOrStdout()), budget: b}
	if k == fbgdKind {
		return w.fbgds(ctx, []types.NamespacedName{key})
	}
	return w.gitRepository(ctx, key, f.rollouts)
}

// revisionWait follows one commit through a GitRepository and its
// FlinkBlueGreenDeployments.
type revisionWait struct {
	client   client.Client
	want     commitRef
	progress *progress
	budget   *budget
}

// gitRepository waits until the GitRepository applied the commit, then,
// with rollouts, until every FlinkBlueGreenDeployment of its inventory
// runs it.
func (w *revisionWait) gitRepository(ctx context.Context, key types.NamespacedName, rollouts bool) error {
	j := &gitRepositoryRevision{want: w.want}
	var applied client.Object
	err := until(ctx, w.budget, fmt.Sprintf("gitrepository %s to apply %s", key, w.want), func(ctx context.Context) (bool, error) {
		obj, err := readObject(ctx, w.client, gitRepositoryKind, key)
		if err != nil {
			return false, err
		}
		v := j.judge(obj)
		applied = obj
		return w.verdict(key.String(), v)
	})
	if err != nil || !rollouts {
		return err
	}
	keys := fbgdsOf(applied)
	if len(keys) == 0 {
		w.progress.outcome(fmt.Sprintf("gitrepository %s: no FlinkBlueGreenDeployment in its inventory", key))
		return nil
	}
	return w.fbgds(ctx, keys)
}

// fbgds waits until every FlinkBlueGreenDeployment of keys runs the commit;
// the first that fails ends the wait.
func (w *revisionWait) fbgds(ctx context.Context, keys []types.NamespacedName) error {
	judges := map[types.NamespacedName]*fbgdRevision{}
	for _, k := range keys {
		judges[k] = &fbgdRevision{want: w.want}
	}
	extended := false
	return until(ctx, w.budget, fmt.Sprintf("%s to go live", w.want), func(ctx context.Context) (bool, error) {
		done := true
		for _, k := range keys {
			j := judges[k]
			if j.done {
				continue
			}
			obj, err := readObject(ctx, w.client, fbgdKind, k)
			if apierrors.IsNotFound(err) {
				return false, &exitError{code: exitFailed, err: fmt.Errorf("fbgd %s was deleted before %s went live on it", k, w.want)}
			}
			if err != nil {
				return false, err
			}
			if !extended {
				w.extend(obj)
			}
			ok, err := w.verdict(k.String(), j.judge(obj))
			if err != nil {
				return false, err
			}
			j.done = ok
			done = done && ok
		}
		extended = true
		return done, nil
	})
}

// extend moves an automatic deadline to cover obj's own timers.
func (w *revisionWait) extend(obj client.Object) {
	if d, err := autoTimeout(obj); err == nil {
		w.budget.extend(time.Now(), d)
	}
}

// verdict prints v and turns it into until's answer.
func (w *revisionWait) verdict(id string, v verdict) (bool, error) {
	if !v.done && v.err == nil {
		w.progress.report(id, v.line)
		return false, nil
	}
	w.progress.outcome(v.line)
	return true, v.err
}
