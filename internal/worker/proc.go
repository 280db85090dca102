/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"bggitops.dev/bg-gitops/internal/spawn"
)

// proc is a started worker process waiting for its request on stdin: a
// worker starts (the Go runtime, every package's init) before it knows
// what it will do, so that a Pool can start one ahead of the request that
// takes it (Warm) and keep the start off that request's latency.
type proc struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	out, errs *capped
	tmp       string // its own HOME and TMPDIR, removed when it is done
	base      int64  // the controller's peak at the start (ownPeak)
}

// kind is what a worker is started for: a fetch, or a build, which warms
// kustomize up while it waits (see Main). Spares are kept of each kind: a
// fetch worker does not pay for kustomize's start-up, and does not take
// CPU from the change it serves for it.
type kind int

const (
	fetches kind = iota
	builds
	kinds
)

func kindOf(req request) kind {
	if req.Build != nil {
		return builds
	}
	return fetches
}

// warmEnv, set in a build worker's environment, makes it warm kustomize
// up before it reads its request: a spare runs a whole small build
// (warmBuild), a worker started for a request already waiting only parses
// kyaml's schema (warmSchema), which the build needs anyway.
const (
	warmEnv    = "BGGITOPS_WORKER_WARM"
	warmBuild  = "build"
	warmSchema = "schema"
)

// start starts a worker process of kind k, a spare or one for a request
// that waits; it reads its request only when given one.
func (p *Pool) start(k kind, spare bool) (*proc, error) {
	bin, err := p.binary()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorker, err)
	}
	tmp, err := os.MkdirTemp("", "bg-gitops-worker-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorker, err)
	}
	cmd := exec.Command(bin, Arg)
	cmd.Env = workerEnv(tmp, k, spare)
	pr := &proc{cmd: cmd, tmp: tmp, out: &capped{max: pick(p.MaxAnswer, DefaultMaxAnswer)}, errs: &capped{max: stderrHead}}
	cmd.Stdout, cmd.Stderr = pr.out, pr.errs
	isolate(cmd)
	cmd.WaitDelay = time.Second // a git left behind may hold stdout
	if pr.stdin, err = cmd.StdinPipe(); err == nil {
		pr.base = ownPeak()
		err = spawn.Start(cmd) // dies with this process: see package spawn
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("%w: %w", ErrWorker, err)
	}
	return pr, nil
}

// serve hands the process its request and waits for it to end; it is
// killed, with its process group, when ctx ends first. It returns the
// error of writing the request (a spare that died while it waited, not
// the request's doing) and that of Wait.
func (pr *proc) serve(ctx context.Context, in []byte) (werr, err error) {
	defer func() { _ = os.RemoveAll(pr.tmp) }() // what a killed worker's clones left
	stop := context.AfterFunc(ctx, func() { killGroup(pr.cmd) })
	defer stop()
	_, werr = pr.stdin.Write(in)
	_ = pr.stdin.Close()
	err = pr.cmd.Wait()
	killGroup(pr.cmd) // a git it started and left behind
	return werr, err
}

// kill ends a process that was never given a request.
func (pr *proc) kill() {
	killGroup(pr.cmd)
	_ = pr.stdin.Close()
	_ = pr.cmd.Wait()
	_ = os.RemoveAll(pr.tmp)
}

// refillDelay is how long after a request a spare taken is replaced:
// starting a process takes CPU (the Go runtime, the binary's pages), which
// the rest of the change it was for (a build after the fetch, the apply
// after the build) would otherwise wait for.
const refillDelay = time.Second

// take is a started process of kind k: a spare if there is one, else a
// new one. The spare is replaced when the request is done (replace).
func (p *Pool) take(k kind) (*proc, error) {
	select {
	case pr := <-p.spares[k]:
		return pr, nil
	default:
	}
	return p.start(k, false)
}

// Warm starts the spare workers of each kind (one per two slots, at
// least one), and replaces each one taken, so that a request does not wait for a worker to start; Close
// ends them.
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

// Close ends the spare workers and stops keeping them; running ones end
// with their requests.
func (p *Pool) Close() {
	p.init()
	p.mu.Lock()
	p.warm = false
	p.mu.Unlock()
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
