/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pollInterval is how often --wait reads the object.
const pollInterval = 250 * time.Millisecond

// waiter follows one request until the controller acknowledges it and the
// object settles.
type waiter struct {
	client client.Client
	key    types.NamespacedName
	kind   *kind
	token  string
	acked  func(client.Object, string) bool
	out    io.Writer
	// progress prints a line whenever the standing changes (on a terminal).
	progress bool
	last     string
	// failureIsOutcome accepts a failure with an active colour.
	failureIsOutcome bool
}

// exitFailed is the exit code of a request whose object settled in a
// failure or did not settle in time (2 stays for errors of the command).
const exitFailed = 3

// readGrace is how long a read of --wait may run past its timeout.
const readGrace = 10 * time.Second

// wait returns nil when the object settles well, an exitFailed error when
// it settles in a failure or the timeout passes.
func (w *waiter) wait(parent context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	// Reads are not bounded by the timeout itself: client-go's rate limiter
	// refuses at once a read it could only start after the context's
	// deadline, and that must end in the timeout, not in a read error.
	readCtx, cancelRead := context.WithTimeout(parent, timeout+readGrace)
	defer cancelRead()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var s standing
	for {
		obj := w.kind.newObject()
		if err := w.client.Get(readCtx, w.key, obj); err != nil && ctx.Err() == nil {
			return fmt.Errorf("read %s %s: %w", w.kind.short, w.key, err)
		}
		if ctx.Err() == nil {
			acked := w.acked(obj, w.token)
			s = w.kind.standing(obj)
			if acked && s.settled {
				return w.finish(s)
			}
			w.report(acked, s)
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(w.out, s.line)
			return &exitError{code: exitFailed, err: fmt.Errorf("timed out after %s waiting for %s %s", timeout, w.kind.short, w.key)}
		case <-tick.C:
		}
	}
}

func (w *waiter) report(acked bool, s standing) {
	line := s.line
	if !acked {
		line = fmt.Sprintf("%s %s: waiting for the controller to handle the request", w.kind.short, w.key)
	}
	if w.progress && line != w.last {
		fmt.Fprintln(w.out, line)
		w.last = line
	}
}

func (w *waiter) finish(s standing) error {
	if !w.progress || s.line != w.last {
		fmt.Fprintln(w.out, s.line)
	}
	if s.failed && !(w.failureIsOutcome && s.active) {
		return &exitError{code: exitFailed, err: errors.New(s.message)}
	}
	return nil
}
