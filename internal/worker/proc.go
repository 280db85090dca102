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

// start starts a worker process; it reads its request only when given one.
func (p *Pool) start() (*proc, error) {
	bin, err := p.binary()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorker, err)
	}
	tmp, err := os.MkdirTemp("", "bg-gitops-worker-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorker, err)
	}
	cmd := exec.Command(bin, Arg)
	cmd.Env = workerEnv(tmp)
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

// take is a started process: a spare if there is one, else a new one.
// The spare is replaced when the request is done (replace).
func (p *Pool) take() (*proc, error) {
	select {
	case pr := <-p.spares:
		return pr, nil
	default:
	}
	return p.start()
}

// Warm starts one spare worker per slot, and replaces each one taken, so
// that a request does not wait for a worker to start; Close ends them.
func (p *Pool) Warm() {
	p.init()
	p.mu.Lock()
	p.warm = true
	p.mu.Unlock()
	for range cap(p.spares) {
		p.refill()
	}
}

// replace refills the spare a request took: at once when none is left (a
// burst of requests), else refillDelay later.
func (p *Pool) replace() {
	if len(p.spares) == 0 {
		go p.refill()
		return
	}
	time.AfterFunc(refillDelay, p.refill)
}

// refill starts a spare when the pool keeps them and has room for one.
func (p *Pool) refill() {
	p.mu.Lock()
	keep := p.warm && len(p.spares) < cap(p.spares)
	p.mu.Unlock()
	if !keep {
		return
	}
	pr, err := p.start()
	if err != nil {
		return // the next request starts its own, and says why if it cannot
	}
	select {
	case p.spares <- pr:
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
	for {
		select {
		case pr := <-p.spares:
			pr.kill()
		default:
			return
		}
	}
}
