/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

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
// many times; the limits exist so that one repository cannot stall or
// exhaust the controller that renders every other one.
//
// DefaultMaxNodes keeps a build's heap at 105-120 MiB at worst, measured
// (doc.go, BenchmarkWorstFileWithinLimits): kustomize takes about half a
// KiB per node counted, whatever the shape of the YAML; 1,400 realistic
// Deployments fit (75 MiB), 2,000 need about 290,000 nodes.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxFileReads = 2000
	DefaultMaxBytes     = 32 << 20
	DefaultMaxObjects   = 2000
	DefaultMaxNodes     = 200_000
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
	LimitNodes     = "YAML nodes"
	// The limits a render worker process runs under (see internal/worker).
	LimitMemory = "memory"
	LimitCPU    = "CPU time"
	LimitStack  = "stack"
)

// LimitError says which limit a build hit.
type LimitError struct {
	// Limit is one of LimitTime, LimitFileReads, LimitBytes, LimitObjects,
	// LimitNodes.
	Limit string
	// Max is the limit's value as configured.
	Max int64
	// Waiting is set when the build ran out of time before kustomize
	// started, waiting for other builds (at most a few run at once, one per
	// tenant, and one that changes kustomize's process-wide OpenAPI schema
	// runs alone): the revision is not at fault and a retry may succeed.
	// Without it, a time limit is the build's own: it would take as long
	// again.
	Waiting bool
	// Peak is what the build was measured to use when it was stopped (a
	// worker's peak resident memory, in bytes), 0 when not measured.
	Peak int64
}

func (e *LimitError) Error() string {
	const raise = "; ask the cluster administrator to raise the limit if this repository really needs it"
	const repeat = " (a base included n times is read n times)"
	const repeatShort = "; a file read n times counts n times"
	const perObject = "; a patch or replacement applied to many objects counts once per object, " +
		"and labels or annotations written into many places once per place"
	switch e.Limit {
	case LimitTime:
		if e.Waiting {
			return fmt.Sprintf("%s: time limit of %s reached while waiting for other builds "+
				"(at most %d run at once, one per tenant, and one that sets kustomize's OpenAPI schema runs alone); a later attempt may succeed",
				ErrLimitExceeded, time.Duration(e.Max), gate.capacity())
		}
		return fmt.Sprintf("%s: the build took longer than the time limit of %s%s",
			ErrLimitExceeded, time.Duration(e.Max), raise)
	case LimitFileReads:
		return fmt.Sprintf("%s: more than %d file reads%s%s", ErrLimitExceeded, e.Max, repeat, raise)
	case LimitBytes:
		return fmt.Sprintf("%s: more than %s read (a file read n times counts n times, YAML aliases as expanded%s)%s",
			ErrLimitExceeded, byteSize(e.Max), perObject, raise)
	case LimitObjects:
		return fmt.Sprintf("%s: more than %d objects read or rendered (every document kustomize reads counts: "+
			"resources, items of Lists, patches, plugin configs, generated ConfigMaps and Secrets%s)%s",
			ErrLimitExceeded, e.Max, repeatShort, raise)
	case LimitNodes:
		return fmt.Sprintf("%s: more than %d YAML nodes read (every key, value and list item counts, "+
			"long text one per %d bytes, aliases as expanded%s%s)%s",
			ErrLimitExceeded, e.Max, bytesPerNode, repeatShort, perObject, raise)
	case LimitMemory:
		peak := ""
		if e.Peak > 0 {
			peak = fmt.Sprintf(" (peak resident %d MiB)", e.Peak>>20)
		}
		return fmt.Sprintf("%s: the build's worker process ran out of its memory limit of %s%s%s",
			ErrLimitExceeded, byteSize(e.Max), peak, raise)
	case LimitCPU:
		return fmt.Sprintf("%s: the build's worker process used more than its CPU time limit of %s%s",
			ErrLimitExceeded, time.Duration(e.Max), raise)
	case LimitStack:
		return fmt.Sprintf("%s: the build's worker process overflowed its stack limit of %s "+
			"(kustomize recursing without end: a YAML alias inside its own anchor, a schema or CRD that refers to itself)",
			ErrLimitExceeded, byteSize(e.Max))
	}
	return fmt.Sprintf("%s: %s %d", ErrLimitExceeded, e.Limit, e.Max)
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
	nodes    int64
	readHook func(path string)
	readDone func(path string, err error)
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
		nodes:    pick(o.MaxNodes, DefaultMaxNodes),
		readHook: o.readHook,
		readDone: o.readDone,
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
	// objs and nodes are counted as files are read (fileObjects,
	// readNodes), before kustomize parses them.
	objs  atomic.Int64
	nodes atomic.Int64
	// hit is the first limit the build ran into: kustomize may wrap the
	// error or swallow it and fail later with another one, so the build
	// reports this one.
	hit atomic.Pointer[LimitError]
	// fan is what the build's patches and replacements cost per object.
	fan fanOut
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

// objects checks the number of objects a build produced.
func (b *budget) objects(n int) error {
	if b != nil && b.lim.objects > 0 && int64(n) > b.lim.objects {
		return b.exceeded(&LimitError{Limit: LimitObjects, Max: b.lim.objects})
	}
	return nil
}

// readObjects accounts for n more objects in the files read. They are
// counted without a limit too: patches are charged per object.
func (b *budget) readObjects(n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	if b.lim.objects > 0 && n > b.lim.objects {
		return b.exceeded(&LimitError{Limit: LimitObjects, Max: b.lim.objects})
	}
	if total := b.objs.Add(n); b.lim.objects > 0 && total > b.lim.objects {
		return b.exceeded(&LimitError{Limit: LimitObjects, Max: b.lim.objects})
	}
	return nil
}

// nodesLeft reports whether n more nodes fit the limit.
func (b *budget) nodesLeft(n int64) bool {
	return b.lim.nodes <= 0 || satAdd(b.nodes.Load(), n) <= b.lim.nodes
}

// readNodes accounts for n more YAML nodes in the files read.
func (b *budget) readNodes(n int64) error {
	if b == nil || n <= 0 || b.lim.nodes <= 0 {
		return nil
	}
	if n > b.lim.nodes || b.nodes.Add(n) > b.lim.nodes {
		return b.exceeded(&LimitError{Limit: LimitNodes, Max: b.lim.nodes})
	}
	return nil
}
