/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// outcome.go: how a reconcile ends — the kind (done, waiting, stalled,
// transient), failure, and the outcome that decides conditions, events, logs
// and the result.

package reconcile

import (
	"cmp"
	"context"
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/redact"
)

// kind is how a reconcile ended. Steps say what went wrong by type (a
// failure, or an error type such as source.Error); each reconciler's
// finish turns the error into an outcome once, and that outcome alone
// decides the conditions, the event, the log line and the ctrl.Result:
//
//	done       no error               requeue after the poll/decision delay
//	waiting    failure{kindWaiting}   condition, event; requeue after, no error
//	stalled    failure{kindStalled}   Stalled, event; reconcile.TerminalError
//	                                  (logged and counted, not retried)
//	           failed(…) of an error  Stalled, event; looked at again at the
//	           Terminal() says        next poll (the remote may change)
//	transient  anything else          step condition, event; error returned
//	                                  for the rate limiter's backoff
type kind int

const (
	kindDone kind = iota
	kindWaiting
	kindStalled
	kindTransient
)

// failure is an error with what a user reads about it: the reason of the
// condition and event and, for a GitRepository step, the negative-polarity
// condition it sets.
type failure struct {
	kind   kind
	cond   string // "" for none
	reason string
	err    error
	// after: for waiting, when to look again (0: the next poll); for
	// stalled, a recheck of a fix no watch reports (0: none, terminal).
	after time.Duration
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// failed is a step's failure of the kind err's type says: stalled when it
// is Terminal() (source.Error), transient otherwise.
func failed(cond, reason string, err error) error {
	return &failure{kind: kindTransient, cond: cond, reason: reason, err: err}
}

func stalledFailure(cond, reason string, err error) error {
	return &failure{kind: kindStalled, cond: cond, reason: reason, err: err}
}

func waitingFailure(cond, reason string, err error) error {
	return &failure{kind: kindWaiting, cond: cond, reason: reason, err: err}
}

// outcome is the classified end of one reconcile.
type outcome struct {
	kind         kind
	cond, reason string
	err          error
	after        time.Duration
}

// outcomeOf classifies err. requeue is the delay of a successful
// reconcile, and of a waiting one that names none.
func outcomeOf(err error, requeue time.Duration) outcome {
	var f *failure
	switch {
	case err == nil:
		return outcome{kind: kindDone, after: requeue}
	case errors.As(err, &f) && f.kind == kindWaiting:
		return outcome{kind: kindWaiting, cond: f.cond, reason: f.reason, err: err, after: cmp.Or(f.after, requeue)}
	case errors.As(err, &f) && f.kind == kindStalled:
		return outcome{kind: kindStalled, cond: f.cond, reason: f.reason, err: err, after: f.after}
	case errors.As(err, &f) && terminal(f.err):
		// Retrying at once cannot help, but the remote can change (a branch
		// or tag pushed later): look again at the next poll, as Flux does.
		return outcome{kind: kindStalled, cond: f.cond, reason: f.reason, err: err, after: cmp.Or(f.after, requeue)}
	case errors.As(err, &f):
		return outcome{kind: kindTransient, cond: f.cond, reason: f.reason, err: err}
	}
	return outcome{kind: kindTransient, err: err}
}

// gitOutcome is the outcome of a GitRepository reconcile, its message
// scrubbed of secret values (see package redact): the condition, the event, the
// log line, the returned error and, through the condition, the sync commit
// status all read it.
func gitOutcome(reg *redact.Registry, gr *v1alpha1.GitRepository, err error, requeue time.Duration) outcome {
	if err != nil {
		err = reg.ForSource(client.ObjectKeyFromObject(gr)).ScrubError(err)
	}
	return outcomeOf(err, requeue)
}

// deploymentOutcome is gitOutcome for a FlinkBlueGreenDeployment.
func deploymentOutcome(reg *redact.Registry, p *v1alpha1.FlinkBlueGreenDeployment, err error, requeue time.Duration) outcome {
	if err != nil {
		err = reg.ForNamespace(p.Namespace).ScrubError(err)
	}
	return outcomeOf(err, requeue)
}

// terminal: an error type of a lower package (source.Error) says retrying
// cannot help.
func terminal(err error) bool {
	var t interface{ Terminal() bool }
	return errors.As(err, &t) && t.Terminal()
}

// result is the answer to controller-runtime: never both a requeue and an
// error (the requeue would be ignored, with a warning).
func (o outcome) result() (ctrl.Result, error) {
	switch {
	case o.kind == kindTransient:
		return ctrl.Result{}, o.err
	case o.kind == kindStalled && o.after == 0:
		return ctrl.Result{}, reconcile.TerminalError(o.err)
	}
	return ctrl.Result{RequeueAfter: o.after}, nil
}

// unwritten is the answer when the status that reports o could not be
// written: retry, whatever o was, so the report is not lost.
func (o outcome) unwritten(err error) (ctrl.Result, error) {
	return ctrl.Result{}, errors.Join(o.err, err)
}

// log writes the one log line of an outcome that returns no error;
// controller-runtime logs a returned error ("Reconciler error"), terminal
// or not, and counts it in its metrics.
func (o outcome) log(ctx context.Context) {
	l := logf.FromContext(ctx)
	switch o.kind {
	case kindDone:
		l.V(1).Info("reconciled", "requeueAfter", o.after)
	case kindWaiting:
		l.Info("waiting", "reason", o.reason, "error", o.err.Error(), "requeueAfter", o.after)
	case kindStalled:
		if o.after > 0 {
			l.Info("stalled", "reason", o.reason, "error", o.err.Error(), "recheckAfter", o.after)
		}
	}
}

// warns: the outcome is reported as a Warning event (when its condition
// changed; an unlabelled transient error has no condition and no event).
func (o outcome) warns() bool {
	return o.kind != kindDone && o.reason != ""
}
