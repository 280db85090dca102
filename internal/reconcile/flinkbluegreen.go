/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen.go: FlinkBlueGreenReconciler, the adapter around
// bluegreen.Decide — observe, decide, execute the actions fenced, write the
// status — and how a reconcile ends (stall, rejection, lasting failure).

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/redact"
)

// FlinkBlueGreenReconciler is the thin Kubernetes adapter around
// bluegreen.Decide: it observes the children, the savepoint and the rollout
// window, asks for a decision, executes its actions and writes the status.
type FlinkBlueGreenReconciler struct {
	// Redact records the Secret values this reconciler learns and scrubs
	// them from every message it publishes (conditions, events, logs,
	// commit statuses); one registry per controller (see package redact).
	Redact *redact.Registry
	Client client.Client
	// APIReader reads the parent from the API server rather than the
	// cache (Client when nil). A child's event can start a reconcile
	// before the cache has seen the previous reconcile's status write;
	// deciding on that stale status repeats the last decision (an abort
	// twice, its failure commit status posted twice).
	APIReader client.Reader
	Recorder  events.EventRecorder
	Now       func() time.Time
	// Commit writes rollout commit statuses; nil disables them.
	Commit *CommitStatusReporter
	// Impersonate returns a client acting as a ServiceAccount (see actor);
	// nil: every write uses Client.
	Impersonate func(namespace, serviceAccount string) (client.Client, error)
	// Tenancy names the ServiceAccount a deployment without one acts as.
	Tenancy Tenancy
	// Slots bound the reconciles of one namespace that run at once (nil:
	// no bound): a forge that never answers holds a worker for each try.
	Slots *namespaceSlots
	// Fence, when set, is checked before a decision's actions (see
	// Options.Fence): they are sent before the time it returns, or not.
	Fence func(context.Context) (time.Time, error)
	// KeepSnapshots is how many finished FlinkStateSnapshots of each
	// FlinkBlueGreenDeployment are kept beyond those in use
	// (--keep-snapshots; see pruneSnapshots); 0 or less keeps every one.
	KeepSnapshots int

	// failures remembers, per FlinkBlueGreenDeployment, the last action
	// that failed with an error retrying may fix (see lastingFailure).
	failures sync.Map // types.NamespacedName → failedAction
	// deletions remembers when this replica first saw each deletion: a
	// deletion first seen late still has its whole deadline (see
	// bluegreen.DeletionOverdue).
	deletions sync.Map // types.NamespacedName → seenDeletion
	// created remembers, per FlinkBlueGreenDeployment, the last
	// FlinkStateSnapshot this replica created for it (see createSnapshot).
	created sync.Map // types.NamespacedName → createdSnapshot
	// pruned remembers, per FlinkBlueGreenDeployment, the rollout after
	// which its snapshots were last pruned (see pruneSnapshots): an idle
	// reconcile lists no FlinkStateSnapshots.
	pruned sync.Map // types.NamespacedName → string
}

// seenDeletion is when a replica first saw the deletion of the object uid.
type seenDeletion struct {
	uid  types.UID
	seen time.Time
}

// failedAction is an action that failed transiently, and the state of
// the status it was decided on.
type failedAction struct {
	action bluegreen.Action
	msg    string
	state  string
}

// Reconcile implements reconcile.Reconciler.
func (r *FlinkBlueGreenReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := r.reader().Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(v1alpha1.FlinkBlueGreenDeploymentKind, req.NamespacedName)
			r.failures.Delete(req.NamespacedName)
			r.deletions.Delete(req.NamespacedName)
			r.created.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		forgetMetrics(v1alpha1.FlinkBlueGreenDeploymentKind, req.NamespacedName)
		if !controllerutil.ContainsFinalizer(p, v1alpha1.FinalSavepointFinalizer) {
			r.deletions.Delete(req.NamespacedName)
			return ctrl.Result{}, nil
		}
	} else if err := r.ensureFinalizer(ctx, p); err != nil {
		return ctrl.Result{}, err
	}
	release, ok := r.Slots.acquire(client.ObjectKeyFromObject(p))
	if !ok {
		logf.FromContext(ctx).V(1).Info("other FlinkBlueGreenDeployments of the namespace hold its workers", "requeueAfter", busyRetry)
		return ctrl.Result{RequeueAfter: busyRetry}, nil
	}
	defer release()
	start, seen := time.Now(), r.deletionSeen(p)
	requeue, err := r.reconcile(ctx, p)
	if err != nil && bluegreen.DeletionOverdue(p, seen, r.now()) {
		err = r.abandonFinalizer(ctx, p, err)
	}
	res, err := r.finish(ctx, p, requeue, err)
	if p.DeletionTimestamp.IsZero() {
		observeDeployment(p, time.Since(start))
	}
	return res, err
}

// deletionSeen is when this replica first saw p's deletion (zero when p
// is not being deleted).
func (r *FlinkBlueGreenReconciler) deletionSeen(p *v1alpha1.FlinkBlueGreenDeployment) time.Time {
	if p.DeletionTimestamp.IsZero() {
		return time.Time{}
	}
	key := client.ObjectKeyFromObject(p)
	if v, ok := r.deletions.Load(key); ok && v.(seenDeletion).uid == p.UID {
		return v.(seenDeletion).seen
	}
	now := r.now()
	r.deletions.Store(key, seenDeletion{uid: p.UID, seen: now})
	return now
}

// reconcile decides, runs the decision's actions and writes its status
// and events. It returns how soon to look again.
func (r *FlinkBlueGreenReconciler) reconcile(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment) (time.Duration, error) {
	in, dec, err := r.decide(ctx, p)
	if err != nil {
		return 0, err
	}
	prev := *p.Status.DeepCopy()
	deleting := !p.DeletionTimestamp.IsZero()
	switch rej := r.lastingFailure(p, in.Now); {
	case rej != nil && !deleting: // a deletion's deadline is Decide's
		dec, err = r.onRejection(ctx, p, rej)
	case len(dec.Actions) == 0:
		r.failures.Delete(client.ObjectKeyFromObject(p)) // nothing is failing
		err = r.relabel(ctx, p, in)
		if err == nil {
			err = r.pruneSnapshots(ctx, p, in, dec.Status)
		}
	default:
		dec, err = r.execute(ctx, p, in, dec)
	}
	if err != nil {
		return 0, err
	}
	ingressRetry := r.routeIngress(ctx, p, &dec)
	requeue := minPositive(dec.RequeueAfter, ingressRetry)
	if r.Commit != nil && !deleting {
		next := p.DeepCopy()
		next.Status = dec.Status
		requeue = minPositive(requeue, r.Commit.ReportRollout(ctx, next, r.saver(p, next)))
		dec.Status = next.Status
	}
	if err := r.patchStatus(ctx, p, dec.Status); err != nil {
		return 0, err
	}
	observeDecision(p, prev, dec, in.Now)
	// Events and metrics after the status write: a failed write is
	// retried with the same decision, which would otherwise report (and
	// count) every event twice.
	r.emit(p, dec.Events)
	if dec.Finalize {
		return 0, r.removeFinalizer(ctx, p)
	}
	return requeue, nil
}

// finish is the one place a FlinkBlueGreenDeployment reconcile's outcome
// is decided (see kind). A decision reports itself (reconcile wrote its
// conditions and events); a stall is reported here; a transient error is
// returned for the rate limiter, with no condition.
func (r *FlinkBlueGreenReconciler) finish(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, requeue time.Duration, err error) (ctrl.Result, error) {
	o := deploymentOutcome(r.Redact, p, err, requeue)
	if o.kind == kindStalled {
		if err := r.stall(ctx, p, o); err != nil {
			return o.unwritten(err)
		}
	}
	o.log(ctx)
	return o.result()
}

// reader is the live reader (APIReader), or the client when there is none.
func (r *FlinkBlueGreenReconciler) reader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// minPositive is the smaller of two requeue delays, 0 meaning none.
func minPositive(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

func (r *FlinkBlueGreenReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// invalidSpec: a spec Decide refuses can never work; it stalls until the
// spec changes.
func invalidSpec(err error) error { return stalledFailure("", "InvalidSpec", err) }

// rejectedAgain: the decision on a rejection was itself refused. It stalls;
// the refusal may be lifted by a change no watch reports (RBAC, an
// admission webhook), so it is rechecked every minute.
func rejectedAgain(err error) error {
	return &failure{kind: kindStalled, reason: "ActionRejected", err: err, after: time.Minute}
}

// observeFailure types an observation error: a cluster without the Flink
// CRDs stalls, rechecked every minute and at once when the CRDs appear
// (flinkWatch); a foreign child and bad rolloutWindows are typed where
// they are found; anything else is transient.
func observeFailure(err error) error {
	msg, ok := missingFlinkCRD(err)
	if !ok {
		return err
	}
	return &failure{kind: kindStalled, reason: "FlinkCRDMissing", err: errors.New(msg), after: time.Minute}
}

// decide observes the children through the cache and decides. A decision
// that would act or change the status is made again on the children read
// from the API server: the cache may not show this controller's last
// writes yet, and a child seen at its previous generation would look
// ready for a spec it has never run. Idle reconciles stay on the cache.
func (r *FlinkBlueGreenReconciler) decide(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment) (bluegreen.Input, bluegreen.Decision, error) {
	in, dec, err := r.decideWith(ctx, r.Client, p)
	if err != nil || len(dec.Actions) == 0 && equality.Semantic.DeepEqual(dec.Status, p.Status) || r.APIReader == nil {
		return in, dec, err
	}
	return r.decideWith(ctx, r.APIReader, p)
}

func (r *FlinkBlueGreenReconciler) decideWith(ctx context.Context, reader client.Reader, p *v1alpha1.FlinkBlueGreenDeployment) (bluegreen.Input, bluegreen.Decision, error) {
	in, err := r.observeWith(ctx, reader, p)
	if err != nil {
		return in, bluegreen.Decision{}, observeFailure(err)
	}
	dec, err := bluegreen.Decide(in)
	if err != nil {
		return in, dec, invalidSpec(err)
	}
	r.recallSnapshotUID(p, &dec.Status)
	return in, dec, nil
}

// observeWith observes the children through reader (the cache, or the API
// server right after this reconcile's own writes).
func (r *FlinkBlueGreenReconciler) observeWith(ctx context.Context, reader client.Reader, p *v1alpha1.FlinkBlueGreenDeployment) (bluegreen.Input, error) {
	in := bluegreen.Input{Parent: p, Now: r.now()}
	var err error
	if in.Blue, err = observeChild(ctx, reader, p, bluegreen.Blue); err != nil {
		return in, err
	}
	if in.Green, err = observeChild(ctx, reader, p, bluegreen.Green); err != nil {
		return in, err
	}
	r.scrubChildErrors(p, in.Blue, in.Green)
	if in.Snapshot, err = observeSnapshot(ctx, reader, r.withRecalledUID(p)); err != nil {
		return in, err
	}
	if err = observeRecord(ctx, reader, p, &in); err != nil {
		return in, err
	}
	in.Window, err = r.window(ctx, p, in.Now)
	return in, err
}

// scrubChildErrors scrubs the children's status.error of secret values
// whole, before Decide quotes it shortened (a cut could leave part of a
// value no scrubber recognises).
func (r *FlinkBlueGreenReconciler) scrubChildErrors(p *v1alpha1.FlinkBlueGreenDeployment, children ...*bluegreen.Child) {
	scrub := r.Redact.ForNamespace(p.Namespace)
	for _, ch := range children {
		if ch != nil && ch.Error != "" {
			ch.Error = scrub.Scrub(ch.Error)
		}
	}
}

// window evaluates the rolloutWindows of the GitRepository that applied p.
func (r *FlinkBlueGreenReconciler) window(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, now time.Time) (bluegreen.Window, error) {
	open := bluegreen.Window{Open: true}
	gr, err := verifiedSource(ctx, r.Client, r.APIReader, p)
	if err != nil || gr == nil {
		return open, err
	}
	w, err := bluegreen.WindowState(gr.Spec.RolloutWindows, now)
	if err != nil {
		return open, stalledFailure("", "ObservationFailed", fmt.Errorf("rolloutWindows of GitRepository %s: %w", gr.SourceValue(), err))
	}
	return w, nil
}

// stall records a problem the controller cannot fix by retrying (Stalled,
// and a Warning event when the status changes); the children are left as
// they are, so the running job is untouched.
func (r *FlinkBlueGreenReconciler) stall(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, o outcome) error {
	st := *p.Status.DeepCopy()
	st.ObservedGeneration = p.Generation
	msg, now := o.err.Error(), r.now()
	for typ, status := range map[string]metav1.ConditionStatus{
		v1alpha1.StalledCondition:     metav1.ConditionTrue,
		v1alpha1.ReadyCondition:       metav1.ConditionFalse,
		v1alpha1.ReconcilingCondition: metav1.ConditionFalse,
	} {
		setCondition(&st.Conditions, p.Generation, now, typ, status, o.reason, msg)
	}
	if !equality.Semantic.DeepEqual(p.Status, st) {
		r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, o.reason, "Reconcile", "%s", msg)
	}
	if r.Commit != nil {
		// A refused spec is the rollout's failure on its commit.
		next := p.DeepCopy()
		next.Status = st
		r.Commit.ReportRollout(ctx, next, r.saver(p, next))
		st = next.Status
	}
	return r.patchStatus(ctx, p, st)
}

// execute runs the decision's actions, fenced (see act). An action the
// API server rejects for good, or one that keeps failing past the
// deadline of the status as stored (bluegreen.Overdue), ends in the
// decision on that failure (a failed rollout, see bluegreen.Rejection),
// never in a retry loop; before the deadline a failure is retried.
func (r *FlinkBlueGreenReconciler) execute(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, in bluegreen.Input, dec bluegreen.Decision) (bluegreen.Decision, error) {
	a, err := r.act(ctx, p, in, &dec)
	key := client.ObjectKeyFromObject(p)
	if err == nil || a == nil {
		if err == nil {
			r.failures.Delete(key)
		}
		return dec, err
	}
	rej := &bluegreen.Rejection{Action: *a, Message: r.Redact.ForNamespace(p.Namespace).Scrub(err.Error())}
	if !rejected(err) {
		if apierrors.IsConflict(err) || !p.DeletionTimestamp.IsZero() {
			// (A deletion gives up its final savepoint at its own
			// deadline, see bluegreen.Decide.)
			return dec, fmt.Errorf("%s: %w", a.Type, err)
		}
		// Retried until it has failed before, on the state as stored (a
		// status that went first included), and that state's deadline
		// has passed.
		before := r.lastingFailure(p, in.Now)
		r.failures.Store(key, failedAction{action: *a, msg: rej.Message, state: stateKey(p)})
		if before == nil {
			return dec, fmt.Errorf("%s: %w", a.Type, err)
		}
		rej.Lasting = before.Lasting
	}
	return r.onRejection(ctx, p, rej)
}

// lastingFailure is the failure of an earlier reconcile of the state p's
// status is in, as a Rejection with Lasting set, once that state's
// deadline has passed (nil before, when nothing failed, or when that
// failure was on another state; a reconcile with nothing to do, or whose
// actions succeed, forgets it). The decision at the deadline may make
// other requests than the failed ones (a fresh savepoint where the new
// colour could not be started): the failure, not the deadline alone,
// ends the rollout, and names its cause.
func (r *FlinkBlueGreenReconciler) lastingFailure(p *v1alpha1.FlinkBlueGreenDeployment, now time.Time) *bluegreen.Rejection {
	v, ok := r.failures.Load(client.ObjectKeyFromObject(p))
	if !ok || v.(failedAction).state != stateKey(p) {
		return nil
	}
	f := v.(failedAction)
	due := bluegreen.Overdue(bluegreen.Input{Parent: p, Now: now})
	if due == "" {
		return nil
	}
	return &bluegreen.Rejection{Action: f.action, Message: f.msg, Lasting: due}
}

// stateKey tells the states of a rollout apart for lastingFailure.
func stateKey(p *v1alpha1.FlinkBlueGreenDeployment) string {
	st := &p.Status
	sp := ""
	if st.Savepoint != nil {
		sp = st.Savepoint.Name
	}
	return string(st.BlueGreenState) + "|" + st.TargetRevision + "|" + sp
}

// act makes dec's actions in order, fenced. A decision that deletes or
// re-specs a child, or asks for a savepoint, writes its status first,
// with an optimistic lock on the status it was decided from (bluegreen.
// StatusFirst): a replica that decided on a status another has changed
// since gets a conflict and acts on nothing. The leader Lease is checked next, and every request is sent
// before it runs out. Each request carries the observation's
// preconditions (do). It returns the action that failed, if one did.
func (r *FlinkBlueGreenReconciler) act(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, in bluegreen.Input, dec *bluegreen.Decision) (*bluegreen.Action, error) {
	if len(dec.Actions) == 0 {
		return nil, nil
	}
	if dec.Route != nil && deletesAChild(dec) {
		// A cut-over: traffic moves to the colour it keeps before the
		// status says so and before the other colour is deleted; once.
		dec.RequeueAfter = minPositive(dec.RequeueAfter, r.routeIngress(ctx, p, dec))
		dec.Route = nil
	}
	if bluegreen.StatusFirst(in, *dec) {
		if err := r.writeStatus(ctx, p, dec.Status); err != nil {
			return nil, err
		}
		// The state changed with that write: its events are told now,
		// whatever becomes of the actions.
		r.emit(p, dec.Events)
		dec.Events = nil
	}
	ctx, cancel, err := r.fenced(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	for i := range dec.Actions {
		if err := r.do(ctx, p, in, dec.Actions[i], &dec.Status); err != nil {
			return &dec.Actions[i], err
		}
	}
	return nil, nil
}

// fenced bounds ctx by the leader Lease (see Fence); without a Fence it
// is ctx.
func (r *FlinkBlueGreenReconciler) fenced(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if r.Fence == nil {
		return ctx, func() {}, nil
	}
	until, err := r.Fence(ctx)
	if err != nil {
		return ctx, nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	return ctx, cancel, nil
}

// onRejection decides again, on the children as they are now (read from
// the API server: the cache may not show this reconcile's own writes) and
// the status as stored (a status that went first included), with the
// failure, and runs that decision's actions.
func (r *FlinkBlueGreenReconciler) onRejection(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, rej *bluegreen.Rejection) (bluegreen.Decision, error) {
	in, err := r.observeWith(ctx, r.reader(), p)
	if err != nil {
		return bluegreen.Decision{}, observeFailure(err)
	}
	in.Rejection = rej
	dec, err := bluegreen.Decide(in)
	if err != nil {
		return dec, invalidSpec(err)
	}
	r.recallSnapshotUID(p, &dec.Status)
	b, err := r.act(ctx, p, in, &dec)
	if err == nil || b == nil {
		if err == nil {
			r.failures.Delete(client.ObjectKeyFromObject(p))
		}
		return dec, err
	}
	err = fmt.Errorf("%s failed (%s), and so did %s: %w", rej.Action.Type, rej.Message, b.Type, err)
	if rejected(err) {
		return dec, rejectedAgain(err)
	}
	return dec, err
}

// rejected reports an error that retrying the same request cannot fix:
// an invalid object, a bad request, or a refusal (RBAC, or an admission
// webhook's denial).
func rejected(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) || schemaMismatch(err)
}

// schemaMismatch: the API server answers a server-side apply whose object
// does not fit the CRD's schema (a string where a number is required)
// with 500 "failed to create typed patch object", not 422 (seen with
// kube-apiserver v1.37). It is the one API error classified by its text:
// neither a status reason nor a cause tells it from other internal errors.
func schemaMismatch(err error) bool {
	return apierrors.IsInternalError(err) && strings.Contains(err.Error(), "failed to create typed patch object")
}

// do sends one action with the preconditions of the observation it was
// decided on: a delete names the observed child's uid and
// resourceVersion, an apply to an observed child its resourceVersion. A
// request delivered late, after the child was changed or replaced, fails
// with a conflict instead of deleting or re-speccing a job another
// decision has taken charge of. An apply that creates a child has none.
//
// A snapshot's create records the uid it was given in st, the status the
// decision writes next (see createSnapshot).
func (r *FlinkBlueGreenReconciler) do(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, in bluegreen.Input, a bluegreen.Action, st *v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	c, err := r.actor(ctx, p)
	if err != nil {
		return err
	}
	switch a.Type {
	case bluegreen.ApplyChild:
		obj, err := childObject(p, a.Child)
		if err != nil {
			return err
		}
		spec, _ := obj.Object["spec"].(map[string]any)
		if err := r.Tenancy.flinkAccounts(spec); err != nil {
			// Refused as the API server refuses a child: the rollout fails.
			return apierrors.NewForbidden(v1alpha1.FlinkDeploymentGVK.GroupVersion().WithResource("flinkdeployments").GroupResource(), a.Child.Name, err)
		}
		seen := in.Observed(a.Child.Name)
		if err := r.checkChildIngress(ctx, c, p, a.Child, seen); err != nil {
			return err
		}
		if seen != nil {
			obj.SetResourceVersion(seen.ResourceVersion)
		}
		return objects.Apply(ctx, c, obj)
	case bluegreen.DeleteChild:
		seen := in.Observed(a.ChildName)
		if seen == nil {
			return nil
		}
		obj := newUnstructured(v1alpha1.FlinkDeploymentGVK)
		obj.SetNamespace(p.Namespace)
		obj.SetName(a.ChildName)
		uid := types.UID(seen.UID)
		return client.IgnoreNotFound(c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: &uid, ResourceVersion: &seen.ResourceVersion}))
	case bluegreen.CreateSnapshot:
		return r.createSnapshot(ctx, c, p, a.Snapshot, st)
	}
	return fmt.Errorf("unknown action %q", a.Type)
}

func (r *FlinkBlueGreenReconciler) emit(p *v1alpha1.FlinkBlueGreenDeployment, evs []bluegreen.Event) {
	for _, e := range evs {
		typ := corev1.EventTypeNormal
		if e.Warning {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(p, nil, typ, e.Reason, "BlueGreen", "%s", e.Message)
	}
}

// patchStatus writes st when it differs from what is stored: an idle
// FlinkBlueGreenDeployment causes no write. The write carries the
// resourceVersion read (an optimistic lock): a status decided on what
// another replica has since changed is refused with a conflict, and the
// reconcile decides again.
func (r *FlinkBlueGreenReconciler) patchStatus(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, st v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	if equality.Semantic.DeepEqual(p.Status, st) {
		return nil
	}
	return r.writeStatus(ctx, p, st)
}

// saver writes next's status over p's for the commit status reporter.
func (r *FlinkBlueGreenReconciler) saver(p, next *v1alpha1.FlinkBlueGreenDeployment) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := r.patchStatus(ctx, p, *next.Status.DeepCopy()); err != nil {
			return err
		}
		next.ResourceVersion = p.ResourceVersion
		return nil
	}
}

// writeStatus writes st with the optimistic lock, also when it equals
// the status stored: the API server then checks the resourceVersion and
// writes nothing, which tells a decision about to act that it was made
// on the latest status.
func (r *FlinkBlueGreenReconciler) writeStatus(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, st v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	base := p.DeepCopy()
	p.Status = st
	return r.Client.Status().Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// deletesAChild reports a decision that deletes a child.
func deletesAChild(dec *bluegreen.Decision) bool {
	for _, a := range dec.Actions {
		if a.Type == bluegreen.DeleteChild {
			return true
		}
	}
	return false
}
