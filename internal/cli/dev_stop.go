//go:build !nodev

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// When `bg-gitops dev` stops: on SIGINT, SIGTERM or SIGHUP, and when its
// standard output breaks (`make demo | tee demo.log`, then Ctrl-C: tee is
// gone before the environment is stopped). Either way it runs its cleanup:
// etcd and kube-apiserver run in process groups of their own and do not
// get the terminal's signals, so only the cleanup stops them. SIGKILL
// leaves no cleanup: then their parent-death signal ends them (and Gitea),
// and the temporary directory stays.

package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// stopSignals end `bg-gitops dev`.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// devContext is cancelled by a stop signal or a broken out; writes to the
// returned writer that fail (EPIPE) cancel it too, instead of the SIGPIPE
// that would kill the process before its cleanup.
func devContext(out io.Writer) (context.Context, io.Writer, context.CancelFunc) {
	signal.Ignore(syscall.SIGPIPE)
	ctx, stopNotify := signal.NotifyContext(context.Background(), stopSignals...)
	ctx, cancel := context.WithCancel(ctx)
	if f, ok := out.(*os.File); ok {
		go cancelWhenReaderGone(ctx, f, cancel)
	}
	return ctx, &cancelOnWriteError{w: out, cancel: cancel}, func() { cancel(); stopNotify() }
}

// cancelWhenReaderGone checks f every half second while nothing is
// written, and cancels once its reader is gone.
func cancelWhenReaderGone(ctx context.Context, f *os.File, cancel context.CancelFunc) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if readerGone(f) {
				cancel()
				return
			}
		}
	}
}

// cancelOnWriteError passes writes on and cancels on the first that fails.
type cancelOnWriteError struct {
	w      io.Writer
	cancel context.CancelFunc
}

func (c *cancelOnWriteError) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		c.cancel()
	}
	return n, err
}
