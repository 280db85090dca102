/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// spares.go: keeping workers ready — an idle worker kept for its tenant's
// next request, and spare workers of each kind (Warm, Close).

package worker

import (
	"context"
	"time"
)

// A Pool keeps two kinds of started workers that run nothing: spares,
// started ahead of any request (Warm), and idle workers, which answered a
// request of a tenant and wait for the tenant's next one, of either kind
// (park). Neither holds a slot.

// refillDelay is how long after a request a spare taken is replaced:
// starting a process takes CPU (the Go runtime, the binary's pages), which
// the rest of the change it was for (a build after the fetch, the apply
// after the build) would otherwise wait for.
const refillDelay = time.Second

// Reuse of a worker by its tenant: it waits idleFor for the next request
// and serves at most maxServes.
const (
	idleFor   = time.Minute
	maxServes = 100
)

// idleProc is a worker waiting for its tenant's next request.
type idleProc struct {
	pr    *proc
	since time.Time
	timer *time.Timer
}

// take is a started process for req of tenant: the tenant's idle worker
// if it can serve req (fits), else a spare of req's kind (spare is true:
// replace it when the request is done), else a new process. An idle
// worker that cannot serve req is retired: a tenant keeps one.
func (p *Pool) take(tenant string, req request) (pr *proc, spare bool, err error) {
	p.init()
	k := kindOf(req)
	p.mu.Lock()
	e := p.idle[tenant]
	if e != nil {
		p.evict(tenant, e)
	}
	p.mu.Unlock()
	switch {
	case e != nil && e.pr.alive() && e.pr.fits(req):
		return e.pr, false, nil
	case e != nil && e.pr.alive():
		go e.pr.retire()
	case e != nil:
		e.pr.kill() // it died while it waited (the OOM killer, its owner)
	}
	select {
	case pr := <-p.spares[k]:
		return pr, true, nil
	default:
	}
	pr, err = p.start(k, false)
	return pr, false, err
}

// park keeps a worker that answered for its tenant's next request,
// unless it is worn (maxServes), a process it started still runs (a git
// that kustomize gave up on; after a build with remote bases, anything
// left in its process group), its request's deadline came, or the pool is
// closed. At most one idle worker per slot is kept: the oldest goes.
func (p *Pool) park(ctx context.Context, tenant string, pr *proc, remote bool) {
	pid := pr.cmd.Process.Pid
	if ctx.Err() != nil || pr.served >= maxServes || !pr.alive() || hasChildren(pid) || remote && groupHasOthers(pid) {
		go pr.retire()
		return
	}
	pr.clean()
	e := &idleProc{pr: pr, since: time.Now()}
	var gone []*proc
	p.mu.Lock()
	if p.closed {
		gone = append(gone, pr)
	} else {
		if old := p.idle[tenant]; old != nil {
			gone = append(gone, p.evict(tenant, old))
		}
		for len(p.idle) >= cap(p.slots) {
			gone = append(gone, p.evictOldest())
		}
		e.timer = time.AfterFunc(idleFor, func() { p.expire(tenant, e) })
		p.idle[tenant] = e
	}
	p.mu.Unlock()
	for _, pr := range gone {
		go pr.retire()
	}
}

// expire ends an idle worker that waited idleFor.
func (p *Pool) expire(key string, e *idleProc) {
	p.mu.Lock()
	mine := p.idle[key] == e
	if mine {
		p.evict(key, e)
	}
	p.mu.Unlock()
	if mine {
		e.pr.retire()
	}
}

// evictOldest takes the idle worker that waits longest out; p.mu is held.
func (p *Pool) evictOldest() *proc {
	var key string
	var oldest *idleProc
	for k, e := range p.idle {
		if oldest == nil || e.since.Before(oldest.since) {
			key, oldest = k, e
		}
	}
	return p.evict(key, oldest)
}

// evict takes an idle worker out, for the caller to retire once p.mu is
// released; p.mu is held.
func (p *Pool) evict(key string, e *idleProc) *proc {
	delete(p.idle, key)
	e.timer.Stop()
	return e.pr
}

// retire ends a worker that has answered and waits for it: it exits when
// its stdin closes, and is killed if it has not within a second.
func (pr *proc) retire() {
	_ = pr.stdin.Close()
	select {
	case <-pr.exited:
	case <-time.After(time.Second):
	}
	pr.kill()
}

// idleCount is how many workers wait for their tenant's next request.
func (p *Pool) idleCount() int {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Warm starts the spare workers of each kind (one per two slots, at
// least one), and replaces each one taken, so that a request does not
// wait for a worker to start; Close ends them.
func (p *Pool) Warm() {
	p.init()
	p.mu.Lock()
	p.warm = true
	p.mu.Unlock()
	for k := range kinds {
		for range cap(p.spares[k]) {
			p.refill(k)
		}
	}
}

// replace refills the spare of kind k a request took: at once when none
// is left (a burst of requests), else refillDelay later.
func (p *Pool) replace(k kind) {
	if len(p.spares[k]) == 0 {
		go p.refill(k)
		return
	}
	time.AfterFunc(refillDelay, func() { p.refill(k) })
}

// refill starts a spare of kind k when the pool keeps them and has room
// for one.
func (p *Pool) refill(k kind) {
	p.mu.Lock()
	keep := p.warm && len(p.spares[k]) < cap(p.spares[k])
	p.mu.Unlock()
	if !keep {
		return
	}
	pr, err := p.start(k, true)
	if err != nil {
		return // the next request starts its own, and says why if it cannot
	}
	select {
	case p.spares[k] <- pr:
	default:
		pr.kill()
	}
	p.mu.Lock()
	closed := !p.warm
	p.mu.Unlock()
	if closed {
		p.drain()
	}
}

// Close ends the spare and idle workers, and stops keeping them; running
// ones end with their requests.
func (p *Pool) Close() {
	p.init()
	var gone []*proc
	p.mu.Lock()
	p.warm, p.closed = false, true
	for key, e := range p.idle {
		gone = append(gone, p.evict(key, e))
	}
	p.mu.Unlock()
	for _, pr := range gone {
		pr.retire()
	}
	p.drain()
}

func (p *Pool) drain() {
	for _, spares := range p.spares {
		for done := false; !done; {
			select {
			case pr := <-spares:
				pr.kill()
			default:
				done = true
			}
		}
	}
}
