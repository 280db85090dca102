/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// limits.go: the limits of a build — defaults, LimitError — and the budget
// every file operation of the sandbox charges.

package render

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Defaults of the limits of a build (Options fields left at zero). A
// kustomization that needs more is almost always one that repeats a base
// many times; the limits exist so that one repository cannot stall the
// controller or make it read without end. Memory, CPU and stack are the
// worker process's to bound (internal/worker), not these.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxFileReads = 2000
	DefaultMaxBytes     = 32 << 20
	DefaultMaxObjects   = 2000
)

// ErrLimitExceeded: a build hit one of the limits of Options. The error is a
// *LimitError that says which limit and its value.
var ErrLimitExceeded = errors.New("render limit exceeded")

// Names of the limits, in LimitError.Limit.
const (
	LimitTime      = "time"
	LimitFileReads = "file reads"
	LimitBytes     = "bytes read"
	LimitObjects   = "objects"
	// The limits a render worker process runs under (see internal/worker).
	LimitMemory = "memory"
	LimitCPU    = "CPU time"
	LimitStack  = "stack"
)

// LimitError says which limit a build hit.
type LimitError struct {
	// Limit is one of LimitTime, LimitFileReads, LimitBytes, LimitObjects,
	// LimitMemory, LimitCPU, LimitStack.
	Limit string
	// Max is the limit's value as configured.
	Max int64
	// Waiting is set when the build ran out of time before kustomize
	// started, waiting for a free build slot (a worker of
	// internal/worker.Pool, or in one process the one kustomize that may
	// run at a time): the revision is not at fault and a retry may
	// succeed. Without it, a time limit is the build's own: it would take
	// as long again.
	Waiting bool
	// Peak is what the build was measured to use when it was stopped (a
	// worker's peak resident memory, in bytes), 0 when not measured.
	Peak int64
}

func (e *LimitError) Error() string { return ErrLimitExceeded.Error() + ": " + e.What() }

// What says which limit was hit and what to do, without the sentinel's
// words (a fetch that ran in a worker says it in its own).
func (e *LimitError) What() string {
	const raise = "; ask the cluster administrator to raise the limit if this repository really needs it"
	const repeat = " (a base included n times is read n times)"
	switch e.Limit {
	case LimitTime:
		if e.Waiting {
			return fmt.Sprintf("time limit of %s reached while waiting for a free build slot "+
				"(builds run a few at a time, at most one per namespace); a later attempt may succeed",
				time.Duration(e.Max))
		}
		return fmt.Sprintf("the build took longer than the time limit of %s%s",
			time.Duration(e.Max), raise)
	case LimitFileReads:
		return fmt.Sprintf("more than %d file reads%s%s", e.Max, repeat, raise)
	case LimitBytes:
		return fmt.Sprintf("more than %s read (a file read n times counts n times)%s",
			byteSize(e.Max), raise)
	case LimitObjects:
		return fmt.Sprintf("more than %d objects rendered%s", e.Max, raise)
	case LimitMemory:
		peak := ""
		if e.Peak > 0 {
			peak = fmt.Sprintf(" (peak resident %d MiB)", e.Peak>>20)
		}
		return fmt.Sprintf("the worker process ran out of its memory limit of %s (--render-max-memory)%s%s",
			byteSize(e.Max), peak, raise)
	case LimitCPU:
		return fmt.Sprintf("the worker process used more than its CPU time limit of %s (--render-max-cpu)%s",
			time.Duration(e.Max), raise)
	case LimitStack:
		return fmt.Sprintf("the worker process overflowed its stack limit of %s "+
			"(kustomize recursing without end: a YAML alias inside its own anchor, a schema or CRD that refers to itself)",
			byteSize(e.Max))
	}
	return fmt.Sprintf("%s %d", e.Limit, e.Max)
}

func (e *LimitError) Unwrap() error { return ErrLimitExceeded }

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// limits are the effective limits of one build; a value <= 0 is no limit.
type limits struct {
	timeout  time.Duration
	reads    int64
	bytes    int64
	objects  int64
	readHook func(path string)
}

func limitsOf(o Options) limits {
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return limits{
		timeout:  time.Duration(pick(int64(o.Timeout), int64(DefaultTimeout))),
		reads:    pick(int64(o.MaxFileReads), DefaultMaxFileReads),
		bytes:    pick(o.MaxBytes, DefaultMaxBytes),
		objects:  pick(int64(o.MaxObjects), DefaultMaxObjects),
		readHook: o.readHook,
	}
}

// budget is what one build may still spend. Every file operation of the
// sandbox goes through it, so a build that runs past its deadline or reads
// too much fails at its next file operation, wherever kustomize is.
type budget struct {
	ctx   context.Context
	lim   limits
	reads atomic.Int64
	bytes atomic.Int64
	// hit is the first limit the build ran into: kustomize may wrap the
	// error or swallow it and fail later with another one, so the build
	// reports this one.
	hit atomic.Pointer[LimitError]
}

func newBudget(ctx context.Context, lim limits) *budget {
	return &budget{ctx: ctx, lim: lim}
}

// alive reports the deadline or cancellation of the build.
func (b *budget) alive() error {
	if b == nil {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return b.ctxError(err)
	}
	return nil
}

func (b *budget) ctxError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return b.exceeded(&LimitError{Limit: LimitTime, Max: int64(b.lim.timeout)})
	}
	return fmt.Errorf("build canceled: %w", err)
}

func (b *budget) exceeded(e *LimitError) *LimitError {
	b.hit.CompareAndSwap(nil, e)
	return e
}

// cause is the error a failed build reports: the limit it hit first, the
// deadline or cancellation if it came, else err.
func (b *budget) cause(err error) error {
	if b == nil {
		return err
	}
	if h := b.hit.Load(); h != nil {
		return h
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return b.ctxError(err)
	}
	if cerr := b.ctx.Err(); cerr != nil {
		return b.ctxError(cerr)
	}
	return err
}

// read accounts for reading a file of size bytes (size < 0: unknown yet,
// call more with the bytes actually read).
func (b *budget) read(path string, size int64) error {
	if b == nil {
		return nil
	}
	if b.lim.readHook != nil {
		b.lim.readHook(path)
	}
	if err := b.alive(); err != nil {
		return err
	}
	if n := b.reads.Add(1); b.lim.reads > 0 && n > b.lim.reads {
		return b.exceeded(&LimitError{Limit: LimitFileReads, Max: b.lim.reads})
	}
	if size > 0 {
		return b.more(size)
	}
	return nil
}

// more accounts for n more bytes read.
func (b *budget) more(n int64) error {
	if b == nil || n <= 0 || b.lim.bytes <= 0 {
		return nil
	}
	if n > b.lim.bytes || b.bytes.Add(n) > b.lim.bytes {
		return b.exceeded(&LimitError{Limit: LimitBytes, Max: b.lim.bytes})
	}
	return nil
}

// remaining is how many bytes may still be read (-1: no limit).
func (b *budget) remaining() int64 {
	if b == nil || b.lim.bytes <= 0 {
		return -1
	}
	return max(b.lim.bytes-b.bytes.Load(), 0)
}

// objects checks the number of objects a build rendered.
func (b *budget) objects(n int) error {
	if b != nil && b.lim.objects > 0 && int64(n) > b.lim.objects {
		return b.exceeded(&LimitError{Limit: LimitObjects, Max: b.lim.objects})
	}
	return nil
}
