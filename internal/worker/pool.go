/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pool.go: Pool, its defaults and Build, and run, which has a worker answer
// a request; DiedError, ErrWorker and ErrKilled say why none did.

package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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
	// fileSize is the largest file a worker writes (kustomize writes
	// none; a remote base's git clone does); a fetch's may write files as
	// large as its git limits.
	fileSize = 256 << 20
)

// Supported reports whether builds can run in worker processes here.
func Supported() bool { return runtime.GOOS == "linux" }

// Pool runs git fetches (Fetch) and kustomize builds (Build) in worker
// processes (see the package doc).
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
	spares  [kinds]chan *proc
	mu      sync.Mutex
	tenants map[string]*tenant
	// idle are the workers waiting for their tenant's next request, by
	// tenant (park).
	idle   map[string]*idleProc
	warm   bool
	closed bool
	// kills counts requests killed from outside in a row (strike).
	kills map[string]int
	// fetches counts the fetches and listings run (Fetches), lists the
	// listings alone (Lists), started the processes.
	fetches, lists, started atomic.Int64
}

// Fetches is how many fetches (and ref listings) the pool ran in workers.
func (p *Pool) Fetches() int64 { return p.fetches.Load() }

// Lists is how many of them were ref listings alone (List).
func (p *Pool) Lists() int64 { return p.lists.Load() }

// tenant is the one running place of a tenant's builds.
type tenant struct {
	place chan struct{}
	users int
}

func (p *Pool) init() {
	p.once.Do(func() {
		p.slots = make(chan struct{}, pick(int64(p.Slots), DefaultSlots))
		// Half the slots' worth of each kind: a fetch and a build of
		// one change each find theirs, and the spares together take no
		// more memory than one per slot.
		for k := range p.spares {
			p.spares[k] = make(chan *proc, (cap(p.slots)+1)/2)
		}
		p.tenants = map[string]*tenant{}
		p.idle = map[string]*idleProc{}
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
// Waiting for a slot is bounded by the build's time limit (a build that
// finds none fails Waiting, to be retried); the build then has its whole
// time limit from when it got one, so that its time is its own.
func (p *Pool) Build(ctx context.Context, root, path string, o render.Options) ([]*unstructured.Unstructured, error) {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = render.DefaultTimeout
	}
	release, err := p.slot(ctx, o.Tenant, timeout)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &render.BuildError{Path: path, Err: &render.LimitError{Limit: render.LimitTime, Max: int64(timeout), Waiting: true}}
		}
		return nil, err
	}
	defer release()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	br := &buildRequest{Root: root, Path: path, AllowRemoteBases: o.AllowRemoteBases, AllowFileURLs: o.AllowFileURLs,
		Revision: o.Revision, Source: o.Source, Limits: o.Limits}
	br.Limits.Timeout = -1 // the parent's deadline ends the worker
	ans, err := p.run(ctx, o.Tenant, p.request(request{Build: br}), timeout)
	err = p.strike(strings.Join([]string{"build", o.Tenant, o.Revision, path}, "\x00"), err)
	switch {
	case err != nil:
		return nil, &render.BuildError{Path: path, Err: err}
	case ans.Error != nil:
		return nil, fromWire(ans.Error)
	}
	return toObjects(ans.Objects)
}

// request is req with the worker's own limits.
func (p *Pool) request(req request) request {
	req.MaxFileSize = fileSize
	req.MaxMemory = pick(p.MaxMemory, DefaultMaxMemory)
	req.MaxCPU = cpuSeconds(p.MaxCPU)
	req.MaxStack = pick(p.MaxStack, DefaultMaxStack)
	return req
}

// cpuSeconds is the CPU limit in whole seconds, rounded up: RLIMIT_CPU
// counts seconds, and 0 would be none.
func cpuSeconds(d time.Duration) int64 {
	d = time.Duration(pick(int64(d), int64(DefaultMaxCPU)))
	return int64((d + time.Second - 1) / time.Second)
}

// slot is acquire bounded by wait (none when wait < 0).
func (p *Pool) slot(ctx context.Context, tenant string, wait time.Duration) (func(), error) {
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	return p.acquire(ctx, tenant)
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

// binary is what a worker runs: Binary, else this very program, as it
// was started even if its file was replaced or removed since (Linux's
// /proc/self/exe), so that a controller never runs workers of another
// version.
func (p *Pool) binary() (string, error) {
	if p.Binary != "" {
		return p.Binary, nil
	}
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// answer is what a worker wrote: its answer, and the revision a fetch
// resolved to (told before the answer, so known even if it died).
type answer struct {
	response
	resolved string
}

// DiedError: a worker ended without answering. Err says why: the limit it
// hit (a *render.LimitError with its measured peak, the time limit when
// it was killed at the deadline) or the Go runtime's last words.
// Revision is what a fetch had resolved the ref to, when it got that far.
// The same input would end the same way.
type DiedError struct {
	Revision string
	Err      error
}

func (e *DiedError) Error() string { return e.Err.Error() }
func (e *DiedError) Unwrap() error { return e.Err }

// run has a worker of tenant answer req: the tenant's idle one, a spare
// or a new one; the worker is killed when ctx ends, and waited for in
// that case. An error is the worker's (ErrWorker, *DiedError, the
// caller's cancellation), never the build's or the fetch's, which are in
// the answer.
func (p *Pool) run(ctx context.Context, tenant string, req request, timeout time.Duration) (answer, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return answer{}, err
	}
	k := kindOf(req)
	for attempt := 1; ; attempt++ {
		pr, spare, err := p.take(tenant, req)
		if err != nil {
			return answer{}, err
		}
		ans, werr, readErr := pr.serve(ctx, in, pick(p.MaxAnswer, DefaultMaxAnswer))
		if spare {
			p.replace(k)
		}
		switch {
		case werr != nil && ctx.Err() == nil && attempt == 1:
			continue // a worker that died while it waited: another one
		case werr != nil && ctx.Err() == nil:
			return answer{}, fmt.Errorf("%w: handing it the request: %w", ErrWorker, werr)
		case werr == nil && readErr == nil:
			pr.limitFiles(req.MaxFileSize)
			p.park(ctx, tenant, pr, remoteBuild(req))
			return ans, nil
		}
		return ans, outcome(ctx, pr, readErr, req, timeout)
	}
}

// remoteBuild reports whether req is a build with remote bases on: a git
// kustomize ran for a remote base may have started a process that
// outlives it, no longer the worker's child but still of its process
// group, and online, which would run during the tenant's next build, which
// may be offline (park checks the group).
func remoteBuild(req request) bool { return req.Build != nil && req.Build.AllowRemoteBases }

// outcome is why a worker that was handed its request has no answer; it
// has ended.
func outcome(ctx context.Context, pr *proc, readErr error, req request, timeout time.Duration) error {
	exit := exitOf(pr.cmd, pr.waitErr, pr.errs.String(), req, pr.base)
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return &DiedError{Err: &render.LimitError{Limit: render.LimitTime, Max: int64(timeout)}}
	case ctx.Err() != nil:
		return ctx.Err()
	case pr.answer.over:
		return fmt.Errorf("the worker's answer is larger than %d bytes", pr.answer.max)
	case exit != nil:
		return exit
	}
	return fmt.Errorf("%w: its answer: %w", ErrWorker, readErr)
}

// ErrWorker: a worker could not be started or did not answer as it
// should, whatever the repository holds; a later attempt may succeed.
var ErrWorker = errors.New("render worker failed")

// ErrKilled: a worker was killed from outside (SIGKILL that was neither the
// pool's nor its CPU limit's): most likely the kernel's OOM killer, when
// the container ran out of memory, whoever used it. It is an ErrWorker,
// retried, until the same request was killed so maxKills times in a row.
var ErrKilled = fmt.Errorf("%w: the worker process was killed (SIGKILL) from outside, most likely because the container ran out of memory; a later attempt may succeed", ErrWorker)

// maxKills is how many times in a row one request may be killed from
// outside before its death is taken as its own (a *DiedError, recorded):
// a build that fills the container every time must not run for ever.
const maxKills = 3

// strike counts a request (key) killed from outside; the maxKills-th kill
// in a row is a *DiedError. Any other outcome resets the count.
func (p *Pool) strike(key string, err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !errors.Is(err, ErrKilled) {
		delete(p.kills, key)
		return err
	}
	if p.kills == nil {
		p.kills = map[string]int{}
	}
	if p.kills[key]++; p.kills[key] < maxKills {
		return err
	}
	delete(p.kills, key)
	return &DiedError{Err: fmt.Errorf("the worker process was killed (SIGKILL) from outside %d times in a row, most likely because the container ran out of memory while it ran; size the container for --render-workers times --render-max-memory", maxKills)}
}

// workerEnv is all a worker inherits: its own directory for temporary
// files, where to find git (a build with remote bases off clears it
// itself, see offline), and the controller's proxy and CA settings for a
// fetch and remote bases.
func workerEnv(tmp string, k kind, spare bool) []string {
	env := []string{"HOME=" + tmp, "TMPDIR=" + tmp}
	if k == builds && spare {
		env = append(env, warmEnv+"="+warmBuild)
	}
	for _, k := range []string{"PATH", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func errorf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrWorker}, a...)...)
}

// stderrHead is how much of a worker's stderr is kept: the Go runtime
// writes why it died first, then the stacks.
const stderrHead = 16 << 10

// capped is a buffer that keeps its first max bytes and notes the rest.
// It has Write only: a bytes.Buffer it embedded would lend it ReadFrom,
// which io.Copy (and so exec.Cmd) would call past the cap.
type capped struct {
	buf  bytes.Buffer
	max  int64
	over bool
}

func (c *capped) Write(b []byte) (int, error) {
	if room := c.max - int64(c.buf.Len()); int64(len(b)) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(b[:room])
		}
		return len(b), nil
	}
	return c.buf.Write(b)
}

func (c *capped) Bytes() []byte  { return c.buf.Bytes() }
func (c *capped) String() string { return c.buf.String() }
