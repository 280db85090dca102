/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/render"
)

// Defaults of a Pool's fields left at zero.
const (
	DefaultSlots     = 4
	DefaultMaxMemory = 512 << 20
	DefaultMaxCPU    = time.Minute
	DefaultMaxStack  = 64 << 20
	// DefaultMaxAnswer bounds the answer read back: the objects of a
	// build within render.DefaultMaxObjects, with room.
	DefaultMaxAnswer = 128 << 20
)

// Supported reports whether builds can run in worker processes here.
func Supported() bool { return runtime.GOOS == "linux" }

// Pool runs kustomize builds in worker processes (see the package doc).
// Its zero value is ready to use, with the defaults.
type Pool struct {
	// Binary is the executable run as a worker, with the one argument
	// Arg; it must call Main when Requested (bg-gitops does). The running
	// executable when empty.
	Binary string
	// Slots is how many workers run at once, one per tenant at most.
	Slots int
	// MaxMemory (bytes) and MaxCPU bound each worker; MaxStack its
	// goroutines' stacks.
	MaxMemory int64
	MaxCPU    time.Duration
	MaxStack  int64
	// MaxAnswer bounds the bytes of a worker's answer.
	MaxAnswer int64

	once    sync.Once
	slots   chan struct{}
	mu      sync.Mutex
	tenants map[string]*tenant
}

// tenant is the one running place of a tenant's builds.
type tenant struct {
	place chan struct{}
	users int
}

func (p *Pool) init() {
	p.once.Do(func() {
		p.slots = make(chan struct{}, pick(int64(p.Slots), DefaultSlots))
		p.tenants = map[string]*tenant{}
	})
}

func pick(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// Build renders path inside root as render.BuildContext does, in a worker
// process; o.TargetNamespace and o.IsClusterScoped are the caller's to
// apply (render.Namespace), since the worker has no API server to ask.
// The build's time limit counts from now, waiting for a slot included.
func (p *Pool) Build(ctx context.Context, root, path string, o render.Options) ([]*unstructured.Unstructured, error) {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = render.DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	release, err := p.acquire(ctx, o.Tenant)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &render.BuildError{Path: path, Err: &render.LimitError{Limit: render.LimitTime, Max: int64(timeout), Waiting: true}}
		}
		return nil, err
	}
	defer release()
	req := request{Root: root, Path: path, AllowRemoteBases: o.AllowRemoteBases, AllowFileURLs: o.AllowFileURLs,
		Revision: o.Revision, Source: o.Source, Limits: o.Limits,
		MaxMemory: pick(p.MaxMemory, DefaultMaxMemory), MaxCPU: cpuSeconds(p.MaxCPU),
		MaxStack: pick(p.MaxStack, DefaultMaxStack)}
	req.Limits.Timeout = -1 // the parent's deadline ends the worker
	return p.run(ctx, req, timeout)
}

// cpuSeconds is the CPU limit in whole seconds, rounded up: RLIMIT_CPU
// counts seconds, and 0 would be none.
func cpuSeconds(d time.Duration) int64 {
	d = time.Duration(pick(int64(d), int64(DefaultMaxCPU)))
	return int64((d + time.Second - 1) / time.Second)
}

// acquire takes the tenant's place, then a slot.
func (p *Pool) acquire(ctx context.Context, name string) (func(), error) {
	p.init()
	p.mu.Lock()
	t := p.tenants[name]
	if t == nil {
		t = &tenant{place: make(chan struct{}, 1)}
		p.tenants[name] = t
	}
	t.users++
	p.mu.Unlock()
	leave := func() {
		p.mu.Lock()
		if t.users--; t.users == 0 {
			delete(p.tenants, name)
		}
		p.mu.Unlock()
	}
	select {
	case t.place <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		<-t.place
		leave()
		return nil, ctx.Err()
	}
	return func() { <-p.slots; <-t.place; leave() }, nil
}

func (p *Pool) binary() (string, error) {
	if p.Binary != "" {
		return p.Binary, nil
	}
	return os.Executable()
}

// run starts one worker for req and reads its answer; the worker is killed
// when ctx ends, and waited for in any case.
func (p *Pool) run(ctx context.Context, req request, timeout time.Duration) ([]*unstructured.Unstructured, error) {
	bin, err := p.binary()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorker, err)
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "bg-gitops-render-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorker, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // what a killed worker's clones left
	cmd := exec.CommandContext(ctx, bin, Arg)
	cmd.Env = workerEnv(tmp, req.AllowRemoteBases)
	cmd.Stdin = bytes.NewReader(in)
	out := &capped{max: pick(p.MaxAnswer, DefaultMaxAnswer)}
	errs := &capped{max: stderrHead}
	cmd.Stdout, cmd.Stderr = out, errs
	isolate(cmd)
	cmd.WaitDelay = time.Second
	base := ownPeak()
	runErr := cmd.Run()
	killGroup(cmd) // a git it started and left behind
	exit := exitOf(cmd, runErr, errs.String(), req, base)
	switch {
	case exit == nil && !out.over:
		// Answered in full, even if the deadline came while it exited.
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return nil, &render.BuildError{Path: req.Path, Err: &render.LimitError{Limit: render.LimitTime, Max: int64(timeout)}}
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case exit != nil:
		return nil, &render.BuildError{Path: req.Path, Err: exit}
	case out.over:
		return nil, &render.BuildError{Path: req.Path, Err: fmt.Errorf("the render worker's answer is larger than %d bytes", out.max)}
	}
	var resp response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		return nil, &render.BuildError{Path: req.Path, Err: fmt.Errorf("%w: its answer: %w", ErrWorker, err)}
	}
	if resp.Error != nil {
		return nil, fromWire(resp.Error)
	}
	return toObjects(resp.Objects)
}

// ErrWorker: a worker could not be started or did not answer as it
// should, whatever the repository holds; a later attempt may succeed.
var ErrWorker = errors.New("render worker failed")

// workerEnv is all a worker inherits: its own directory for temporary
// files, and, with remote bases on, where to find git.
func workerEnv(tmp string, remote bool) []string {
	env := []string{"HOME=" + tmp, "TMPDIR=" + tmp}
	if remote {
		env = append(env, "PATH="+os.Getenv("PATH"))
	}
	return env
}

// stderrHead is how much of a worker's stderr is kept: the Go runtime
// writes why it died first, then the stacks.
const stderrHead = 16 << 10

// capped is a buffer that keeps its first max bytes and notes the rest.
type capped struct {
	bytes.Buffer
	max  int64
	over bool
}

func (c *capped) Write(b []byte) (int, error) {
	if room := c.max - int64(c.Len()); int64(len(b)) > room {
		c.over = true
		if room > 0 {
			c.Buffer.Write(b[:room])
		}
		return len(b), nil
	}
	return c.Buffer.Write(b)
}
