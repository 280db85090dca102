/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The request verbs reconcile, suspend, resume, promote, abort and retry: each
// sets an annotation the controller acts on and, with --wait, follows the object
// until it has handled the request and settled.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// requestFlags are the flags of the request verbs.
type requestFlags struct {
	*kubeFlags
	wait    bool
	timeout timeoutFlag
}

// request is one verb on one kind: the annotations it sets (a nil value
// removes the annotation) and, for --wait, the status field that
// acknowledges it.
type request struct {
	verb, short string
	kind        *kind
	// annotations returns the merge patch for a request made at token.
	annotations func(token string) map[string]*string
	// handled is the request the object's status says the controller
	// handled last; nil when there is nothing to wait for.
	handled func(obj client.Object) string
	// failureIsOutcome: the request itself ends the rollout in a failure
	// (abort keeps the old colour and reports the transition as failed), so
	// an active colour is success.
	failureIsOutcome bool
	// check, when set, refuses a request the object cannot act on.
	check precheck
}

// newRequestCommand returns `bg-gitops VERB` with one subcommand per kind.
func newRequestCommand(verb, short string, reqs ...*request) *cobra.Command {
	f := &requestFlags{kubeFlags: newKubeFlags(), timeout: timeoutFlag{auto: true}}
	cmd := &cobra.Command{Use: verb + " KIND NAME", Short: short, Args: cobra.NoArgs,
		Long: short + ".\n\nWith --wait: " + exitCodesHelp}
	pf := cmd.PersistentFlags()
	f.addFlags(pf)
	pf.BoolVar(&f.wait, "wait", false, "wait until the controller has handled the request and the object has settled")
	pf.Var(&f.timeout, "timeout", timeoutHelp)
	for _, r := range reqs {
		cmd.AddCommand(r.command(f))
	}
	return cmd
}

func (r *request) command(f *requestFlags) *cobra.Command {
	return &cobra.Command{
		Use:               r.kind.name + " NAME",
		Aliases:           r.kind.aliases,
		Short:             r.short,
		Example:           r.example(),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.completeNames(r.kind),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.run(cmd, f, args[0])
		},
	}
}

func (r *request) run(cmd *cobra.Command, f *requestFlags, name string) error {
	n, err := f.named(cmd, name)
	if err != nil {
		return err
	}
	ctx, c, key := n.ctx, n.client, n.key
	obj, err := r.precheck(ctx, c, key, f.wait)
	if err != nil {
		return err
	}
	wait := f.wait && r.handled != nil
	var b *budget
	if wait {
		// Before the request: a wait refused must leave no request behind.
		if b, err = f.timeout.budgetFor(time.Now(), obj); err != nil {
			return err
		}
	}
	token := time.Now().UTC().Format(time.RFC3339Nano)
	if err := r.patch(ctx, c, key, token); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if !wait {
		fmt.Fprintf(out, "%s %s: %s requested\n", r.kind.short, key, r.verb)
		return nil
	}
	w := &requestWait{client: c, key: key, kind: r.kind, token: token, handled: r.handled, before: r.handled(obj),
		progress: newProgress(out), failureIsOutcome: r.failureIsOutcome}
	return until(ctx, b, fmt.Sprintf("%s %s", r.kind.short, key), w.check)
}

// example is the Example section of a verb.
func (r *request) example() string {
	name, ns := "jobs", "flink"
	if r.kind == fbgdKind {
		name = "orders"
	}
	line := fmt.Sprintf("  bg-gitops %s %s %s -n %s", r.verb, r.kind.name, name, ns)
	if r.handled == nil {
		return line
	}
	return line + "\n" + line + " --wait --timeout auto   # exit 0 settled, 3 failed, 4 timed out"
}

// precheck reads the object and refuses a request it cannot act on.
func (r *request) precheck(ctx context.Context, c client.Client, key types.NamespacedName, wait bool) (client.Object, error) {
	obj, err := readObject(ctx, c, r.kind, key)
	if err != nil {
		return nil, notFoundOr(r.kind, key, err)
	}
	if r.check == nil {
		return obj, nil
	}
	return obj, r.check(obj, wait)
}

// patch merge-patches the request annotations (the object must exist: a
// merge patch does not create).
func (r *request) patch(ctx context.Context, c client.Client, key types.NamespacedName, token string) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": r.annotations(token)}})
	if err != nil {
		return err
	}
	obj := r.kind.newObject()
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body)); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s not found", r.kind.short, key)
		}
		return fmt.Errorf("%s %s %s: %w", r.verb, r.kind.short, key, err)
	}
	return nil
}

func set(key string) func(string) map[string]*string {
	return func(token string) map[string]*string { return map[string]*string{key: &token} }
}

// newRequestCommands returns reconcile, suspend, resume, promote, abort
// and retry.
func newRequestCommands() []*cobra.Command {
	suspended := "true"
	reconcile := &request{verb: "reconcile", short: "Fetch, render and apply now", kind: gitRepositoryKind,
		annotations: set(v1alpha1.ReconcileRequestedAtAnnotation), handled: gitRepositoryHandled, check: notWhileSuspended}
	suspend := &request{verb: "suspend", short: "Stop fetching and applying (annotation " + v1alpha1.SuspendAnnotation + ")",
		kind: gitRepositoryKind,
		annotations: func(string) map[string]*string {
			return map[string]*string{v1alpha1.SuspendAnnotation: &suspended}
		}}
	resume := &request{verb: "resume", short: "Resume a suspended GitRepository and reconcile it now", kind: gitRepositoryKind,
		annotations: func(token string) map[string]*string {
			return map[string]*string{v1alpha1.SuspendAnnotation: nil, v1alpha1.ReconcileRequestedAtAnnotation: &token}
		}, handled: gitRepositoryHandled, check: resumeOverriddenBySpec}
	abort := fbgdRequest("abort", "Abort the transition in progress", v1alpha1.AbortRequestedAtAnnotation)
	abort.failureIsOutcome = true
	return []*cobra.Command{
		newRequestCommand("reconcile", "Ask the controller to reconcile an object now", reconcile),
		newRequestCommand("suspend", "Suspend an object", suspend),
		newRequestCommand("resume", "Resume a suspended object", resume),
		newRequestCommand("promote", "Cut over to the new colour of a transition in promotion mode Manual",
			fbgdRequest("promote", "Cut over to the new colour", v1alpha1.PromoteRequestedAtAnnotation)),
		newRequestCommand("abort", "Abort the transition in progress and keep the old colour", abort),
		newRequestCommand("retry", "Retry the spec whose transition aborted or failed",
			fbgdRequest("retry", "Retry the aborted or failed spec", v1alpha1.RetryRequestedAtAnnotation)),
	}
}

func fbgdRequest(verb, short, annotation string) *request {
	return &request{verb: verb, short: short, kind: fbgdKind, annotations: set(annotation), check: fbgdCanAct(verb),
		handled: func(obj client.Object) string {
			st := obj.(*v1alpha1.FlinkBlueGreenDeployment).Status
			return map[string]string{
				v1alpha1.PromoteRequestedAtAnnotation: st.LastHandledPromoteAt,
				v1alpha1.AbortRequestedAtAnnotation:   st.LastHandledAbortAt,
				v1alpha1.RetryRequestedAtAnnotation:   st.LastHandledRetryAt,
			}[annotation]
		}}
}

func gitRepositoryHandled(obj client.Object) string {
	return obj.(*v1alpha1.GitRepository).Status.LastHandledReconcileAt
}

// handledSince reports whether handled, the last request the controller
// handled, is token or a request made at or after it: a push webhook or
// another person's request that replaced ours in the annotation did what
// ours asked. The request handled before ours was made (before) is not
// one, whatever its time: another clock (the controller's, another
// person's) stamped it. Values that are not times compare as they are.
func handledSince(handled, before, token string) bool {
	if handled == token {
		return true
	}
	if handled == before {
		return false
	}
	h, err1 := time.Parse(time.RFC3339Nano, handled)
	t, err2 := time.Parse(time.RFC3339Nano, token)
	return err1 == nil && err2 == nil && !h.Before(t)
}

// requestWait follows one request until the controller acknowledges it
// and the object settles.
type requestWait struct {
	client client.Client
	key    types.NamespacedName
	kind   *kind
	token  string
	// handled reads the last request handled; before is what it read
	// before the request was made.
	handled func(client.Object) string
	before  string
	// failureIsOutcome accepts a failure with an active colour.
	failureIsOutcome bool
	progress         *progress
}

func (w *requestWait) check(ctx context.Context) (bool, error) {
	obj, err := readObject(ctx, w.client, w.kind, w.key)
	if err != nil {
		return false, err
	}
	s := w.kind.standing(obj)
	if !handledSince(w.handled(obj), w.before, w.token) {
		w.progress.report(w.key.String(), fmt.Sprintf("%s %s: waiting for the controller to handle the request", w.kind.short, w.key))
		return false, nil
	}
	if !s.settled {
		w.progress.report(w.key.String(), s.line)
		return false, nil
	}
	w.progress.outcome(s.line)
	if s.failed && !(w.failureIsOutcome && s.active) {
		return true, &exitError{code: exitFailed, err: errors.New(s.message)}
	}
	if w.failureIsOutcome && !s.failed {
		// An abort that happens ends the rollout FAILING; settled well
		// means the transition ended before the controller read the
		// request, which it acknowledged as ignored.
		return true, &exitError{code: exitFailed, err: fmt.Errorf("nothing was aborted: the transition ended before the controller handled the request (%s)", s.line)}
	}
	return true, nil
}
