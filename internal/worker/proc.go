/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// proc.go: proc, one started worker process — starting it, handing it a
// request, reading its answer within a bound, killing it.

package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
	// answer reads its stdout, at most a bound per answer.
	answer *bounded
	errs   *capped
	tmp    string // its own HOME and TMPDIR, removed when it is done
	base   int64  // the controller's peak at the start (ownPeak)
	// mu orders signals before reaping: a process group's id is its
	// leader's pid, another group's once the leader is reaped and no
	// member is left.
	mu     sync.Mutex
	reaped bool
	// exited is closed once the process was reaped, waitErr set.
	exited  chan struct{}
	waitErr error
	// served is how many requests it answered.
	served int
	// fileSize is the largest file the process may write, as its last
	// request set it (fileSizeLimit); -1 while it is unbounded.
	fileSize int64
}

// fits reports whether the process can serve req: its file size limit,
// which a process can only lower, is not below what req asks for.
func (pr *proc) fits(req request) bool {
	want := fileSizeOf(req.MaxFileSize)
	switch {
	case pr.fileSize < 0:
		return true
	case want < 0:
		return false
	}
	return want <= pr.fileSize
}

// limitFiles notes the file size limit a request it served set.
func (pr *proc) limitFiles(limit int64) {
	if size := fileSizeOf(limit); size >= 0 {
		pr.fileSize = size
	}
}

// fileSizeOf is the file size limit a request's limit sets in the worker
// (fileSizeLimit): -1, none, for a negative one, else at least fileSize.
func fileSizeOf(limit int64) int64 {
	if limit < 0 {
		return -1
	}
	return max(limit, fileSize)
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

// warmEnv, set in a spare build worker's environment, makes it warm
// kustomize up before it reads its request: it runs a whole small build
// (warmBuild), which parses kyaml's schema. A worker started for a request
// already waiting does not: kustomize parses the schema only for a build
// that needs it (a strategic merge patch, say), and that parse is half the
// CPU a small build takes in a new worker.
const (
	warmEnv   = "BGGITOPS_WORKER_WARM"
	warmBuild = "build"
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
	pr := &proc{cmd: cmd, tmp: tmp, answer: answer, errs: &capped{max: stderrHead}, exited: make(chan struct{}), fileSize: -1}
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

// wait kills what is left of the process's group once it ended (a git it
// started and left behind, so that its stdout ends), then reaps it.
func (pr *proc) wait() {
	waitExited(pr.cmd.Process.Pid)
	pr.mu.Lock()
	killGroup(pr.cmd)
	pr.waitErr = pr.cmd.Wait()
	pr.reaped = true
	pr.mu.Unlock()
	close(pr.exited)
}

// signal kills the process and its group, unless it was reaped.
func (pr *proc) signal() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.reaped {
		killGroup(pr.cmd)
	}
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
	stop := context.AfterFunc(ctx, pr.signal)
	defer stop()
	if _, werr = pr.stdin.Write(in); werr != nil {
		pr.kill()
		return answer{}, werr, nil
	}
	// A decoder per answer: one kept would hold the buffer of the
	// largest answer while the worker waits.
	pr.answer.reset(maxAnswer)
	dec := json.NewDecoder(pr.answer)
	if ans, err = readAnswer(dec); err == nil && !blank(dec.Buffered()) {
		err = fmt.Errorf("the worker wrote past its answer")
	}
	if err != nil {
		pr.kill()
		return ans, nil, err
	}
	pr.served++
	return ans, nil, nil
}

// blank reports whether r holds nothing but white space.
func blank(r io.Reader) bool {
	b, _ := io.ReadAll(r)
	return len(bytes.TrimSpace(b)) == 0
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
	pr.signal()
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
