/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"bggitops.dev/bg-gitops/internal/spawn"
)

// proc is a started worker process. A worker starts (the Go runtime,
// every package's init) before it knows what it will do, so that a Pool
// can start one ahead of the request that takes it (Warm) and keep the
// start off that request's latency; it then serves requests one after
// the other on stdin and stdout, until its stdin is closed, so that the
// next request of the same tenant (Pool.park) pays for no start at all.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// out reads its stdout, answer bounds one answer's bytes.
	out    *json.Decoder
	answer *bounded
	errs   *capped
	tmp    string // its own HOME and TMPDIR, removed when it is done
	base   int64  // the controller's peak at the start (ownPeak)
	// exited is closed once the process ended, waitErr set.
	exited  chan struct{}
	waitErr error
	// served is how many requests it answered, cpu the CPU time it had
	// used at its last answer.
	served int
	cpu    time.Duration
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
	pr, err := p.spawn(bin, tmp, k, spare)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("%w: %w", ErrWorker, err)
	}
	p.started.Add(1)
	go pr.wait()
	return pr, nil
}

// spawn starts the process, its stdout a pipe of its own: the pool reads
// it while the process lives, which exec.Cmd's pipe does not allow.
func (p *Pool) spawn(bin, tmp string, k kind, spare bool) (*proc, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Close() }() // the child holds its own copy
	cmd := exec.Command(bin, Arg)
	cmd.Env = workerEnv(tmp, k, spare)
	answer := &bounded{r: r}
	pr := &proc{cmd: cmd, tmp: tmp, answer: answer, out: json.NewDecoder(answer),
		errs: &capped{max: stderrHead}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w, pr.errs
	isolate(cmd)
	cmd.WaitDelay = time.Second // a git left behind may hold stderr
	if pr.stdin, err = cmd.StdinPipe(); err == nil {
		pr.base = ownPeak()
		err = spawn.Start(cmd) // dies with this process: see package spawn
	}
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return pr, nil
}

// wait reaps the process, then kills what is left of its group (a git it
// started and left behind), so that its stdout ends.
func (pr *proc) wait() {
	pr.waitErr = pr.cmd.Wait()
	killGroup(pr.cmd)
	close(pr.exited)
}

// alive reports whether the process still runs.
func (pr *proc) alive() bool {
	select {
	case <-pr.exited:
		return false
	default:
		return true
	}
}

// serve hands the process a request and reads its frames up to the
// answer, at most maxAnswer bytes; the process is killed, with its
// process group, when ctx ends first. werr is the error of writing the
// request (a spare that died while it waited, not the request's doing);
// err, that of reading the answer, after which the process has ended.
func (pr *proc) serve(ctx context.Context, in []byte, maxAnswer int64) (ans answer, werr, err error) {
	stop := context.AfterFunc(ctx, func() { killGroup(pr.cmd) })
	defer stop()
	if _, werr = pr.stdin.Write(in); werr != nil {
		pr.kill()
		return answer{}, werr, nil
	}
	pr.answer.reset(maxAnswer)
	if ans, err = readAnswer(pr.out); err != nil {
		pr.kill()
		return ans, nil, err
	}
	pr.served++
	pr.cpu = ans.CPU
	return ans, nil, nil
}

// readAnswer reads a worker's frames up to its answer; what it resolved
// is kept even when the answer is missing or cut short.
func readAnswer(dec *json.Decoder) (answer, error) {
	var ans answer
	for {
		var f frame
		if err := dec.Decode(&f); err != nil {
			if err == io.EOF {
				err = fmt.Errorf("no answer")
			}
			return ans, err
		}
		if f.Resolved != "" {
			ans.resolved = f.Resolved
		}
		if f.Answer != nil {
			ans.response = *f.Answer
			return ans, nil
		}
	}
}

// kill ends the process and waits for it; its files go.
func (pr *proc) kill() {
	killGroup(pr.cmd)
	_ = pr.stdin.Close()
	<-pr.exited
	_ = pr.answer.r.Close()
	_ = os.RemoveAll(pr.tmp)
}

// clean removes what a request left in the worker's own directory (a
// remote base's clone kustomize did not remove), before the next one.
func (pr *proc) clean() {
	entries, _ := os.ReadDir(pr.tmp)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(pr.tmp, e.Name()))
	}
}

// bounded reads a worker's stdout, at most max bytes per answer; past it
// the read fails and over is set.
type bounded struct {
	r         *os.File
	max, left int64
	over      bool
}

func (b *bounded) reset(max int64) { b.max, b.left, b.over = max, max, false }

func (b *bounded) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.over = true
		return 0, fmt.Errorf("the answer is larger than its bound")
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}
