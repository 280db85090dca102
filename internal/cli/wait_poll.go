/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The poll loop of every command that waits (wait, the verbs' --wait): the
// budget, the progress lines, the exit codes, and which read errors are retried.

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
)

// pollInterval is how often a wait reads the objects it follows.
const pollInterval = 500 * time.Millisecond

// The exit codes of every command that waits (and of the request verbs).
const (
	// exitFailed: the command ran, the outcome is not what was asked (the
	// object settled in a failure, the rollout aborted or failed, or was
	// superseded before it went live).
	exitFailed = 3
	// exitTimedOut: the timeout passed before an outcome.
	exitTimedOut = 4
)

// readGrace is how long a read may run past the deadline.
const readGrace = 10 * time.Second

// budget is how long a wait may take; a wait that learns more of what it
// follows (the rollouts of a GitRepository) may extend an automatic one.
type budget struct {
	deadline time.Time
	// auto: the deadline follows the objects' own timers.
	auto bool
	// started is when the wait began, for the timeout message.
	started time.Time
}

func newBudget(now time.Time, d time.Duration, auto bool) *budget {
	return &budget{deadline: now.Add(d), auto: auto, started: now}
}

// extend moves an automatic deadline to now+d when that is later.
func (b *budget) extend(now time.Time, d time.Duration) {
	if b.auto && now.Add(d).After(b.deadline) {
		b.deadline = now.Add(d)
	}
}

// progress prints where the followed objects stand, one line per change:
// timestamped without a terminal (a CI log), plain on one.
type progress struct {
	out  io.Writer
	tty  bool
	now  func() time.Time
	last map[string]string
}

func newProgress(out io.Writer) *progress {
	return &progress{out: out, tty: isTerminal(out), now: time.Now, last: map[string]string{}}
}

// report prints line for id when it differs from the last one printed.
func (p *progress) report(id, line string) {
	if p.last[id] == line {
		return
	}
	p.last[id] = line
	if p.tty {
		fmt.Fprintln(p.out, line)
		return
	}
	fmt.Fprintf(p.out, "%s %s\n", p.now().UTC().Format(time.RFC3339), line)
}

// outcome prints the final line, without a timestamp.
func (p *progress) outcome(line string) { fmt.Fprintln(p.out, line) }

// check reads what a wait follows and says whether it is done; an error
// ends the wait (an exitError for an outcome that is not what was asked).
type check func(ctx context.Context) (done bool, err error)

// until runs check every pollInterval until it is done, fails, or the
// budget's deadline passes (exitTimedOut).
func until(parent context.Context, b *budget, what string, c check) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var lastErr error
	for {
		if !time.Now().Before(b.deadline) {
			return timedOut(b, what, lastErr)
		}
		// A read may run a little past the deadline: client-go's rate
		// limiter refuses at once a read it could only start after a
		// context's deadline, and that must end in the timeout.
		ctx, cancel := context.WithDeadline(parent, b.deadline.Add(readGrace))
		done, err := c(ctx)
		cancel()
		switch {
		case err != nil && parent.Err() != nil:
			return parent.Err()
		case err != nil && !time.Now().Before(b.deadline) && !isExit(err):
			return timedOut(b, what, err)
		case err != nil && transient(err):
			// The API server restarting, a 503 of a load balancer, a
			// dropped connection: a wait that may last an hour reads again.
			lastErr = err
		case err != nil || done:
			return err
		default:
			lastErr = nil
		}
		select {
		case <-parent.Done():
			return parent.Err()
		case <-tick.C:
		}
	}
}

func timedOut(b *budget, what string, lastErr error) error {
	err := fmt.Errorf("timed out after %s waiting for %s", b.deadline.Sub(b.started).Round(time.Second), what)
	if lastErr != nil {
		err = fmt.Errorf("%w (the last read failed: %v)", err, lastErr)
	}
	return &exitError{code: exitTimedOut, err: err}
}

// transient reports a read error that reading again may cure: not an
// outcome, and not an answer of the API server that will stay the same
// (missing, forbidden, unauthorized, a kind it does not serve, a bad
// request).
func transient(err error) bool {
	switch {
	case isExit(err), apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsUnauthorized(err),
		apierrors.IsBadRequest(err), apierrors.IsInvalid(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err), apimeta.IsNoMatchError(err):
		return false
	}
	return true
}

func isExit(err error) bool {
	var ee *exitError
	return errors.As(err, &ee)
}
