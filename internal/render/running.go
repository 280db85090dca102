/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"context"
	"sync"
)

// maxRunning bounds the kustomize goroutines of the process that have not
// returned, abandoned ones included (the gate admits them, schema.go): a
// build past its deadline keeps its place until kustomize really returns,
// so builds that overrun cannot pile up (each retry or poll would
// otherwise start another) and the memory of builds in flight stays within
// maxRunning times what one build may take (at most about 120 MiB of heap
// with the default limits, doc.go: two fit a 512 MiB controller). A build waits for a place until
// its own deadline, then fails with a *LimitError that is Waiting. Two,
// not one, so that a single build stuck on a remote base does not stop
// every other. A tenant (Options.Tenant) takes at most one place, abandoned
// builds included, so that one tenant's builds cannot keep all of them.
const maxRunning = 2

// buildRun is what one build's kustomize goroutine shares with the
// sandbox's file operations and with its deadline, so that a goroutine
// past its deadline leaves the schema gate at a point where it touches no
// kyaml state (schema.go). krusty runs on one goroutine: the sandbox's
// operations of a build do not overlap.
type buildRun struct {
	ctx    context.Context
	tenant string // Options.Tenant
	mu     sync.Mutex
	inOp   int
	seat   *seat // while the goroutine is in the gate
}

// enterOp and exitOp bracket every file operation of the sandbox.
func (r *buildRun) enterOp() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inOp++
	r.stepOutLocked()
}

// exitOp steps back in as a shared reader before the operation returns to
// kustomize, if the build stepped out.
func (r *buildRun) exitOp() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.stepOutLocked()
	r.inOp--
	s := r.seat
	r.mu.Unlock()
	if s != nil {
		gate.stepIn(s)
	}
}

// stepOutLocked takes a build past its deadline out of the gate; r.mu is
// held and the goroutine is inside a file operation.
func (r *buildRun) stepOutLocked() {
	if r.seat != nil && r.ctx.Err() != nil {
		gate.stepOut(r.seat)
	}
}

// expire runs at the deadline: a goroutine inside a file operation (it
// may stay there: a slow read, a test hook) steps out now; one that is
// computing steps out at its next operation.
func (r *buildRun) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inOp > 0 {
		r.stepOutLocked()
	}
}

// run takes a place among the running goroutines (the tenant's one) and
// in the schema gate (exclusive: alone) within the build's deadline, runs
// fn, and gives both back when fn returns. started is called once fn runs:
// a deadline before that was spent waiting for other builds.
func (r *buildRun) run(exclusive bool, onWait func(), started func(), fn func() error) error {
	warmOnce.Do(warmSchema)
	s, err := gate.enter(r.ctx, exclusive, r.tenant, onWait)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.seat = s
	r.mu.Unlock()
	stop := context.AfterFunc(r.ctx, r.expire)
	defer func() {
		stop()
		r.mu.Lock()
		r.seat = nil
		r.mu.Unlock()
		gate.leave(s)
	}()
	if exclusive {
		restoreSchema() // from the default, whatever a panic left
	}
	if started != nil {
		started()
	}
	return fn()
}
