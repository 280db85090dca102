/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// worker.go: the worker's side — Requested and Main, which read requests on
// stdin, set the limits, build or fetch, and write each answer.

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"bggitops.dev/bg-gitops/internal/render"
)

// exitProtocol is the exit code of a worker that failed at its own
// protocol (reading its request, setting its limits, writing its answer),
// not at the fetch or build: the parent retries it. The Go runtime exits
// with 2 when it dies, a kustomize log.Fatal with 1.
const exitProtocol = 3

// exitCPU is the exit code of a worker that used the CPU time it had for
// the request it served (catchCPU).
const exitCPU = 4

// maxRequest bounds the request a worker reads: a fetch's carries its
// Secret's data (at most 1 MiB, as JSON base64 a third more).
const maxRequest = 4 << 20

// Requested reports whether this process was started as a render worker.
func Requested() bool { return len(os.Args) == 2 && os.Args[1] == Arg }

// init makes every binary that links the package (bg-gitops, and the test
// binaries of the packages that run the controller) a render worker when
// started as one, before its own main or TestMain runs.
func init() {
	if Requested() {
		os.Exit(Main())
	}
}

// Main is the worker: it reads requests on stdin one after the other,
// sets its limits at the first, builds or fetches, writes each answer on
// stdout, and returns the exit code once stdin ends.
func Main() int {
	if os.Getenv(warmEnv) == warmBuild { // while the request has not come
		render.Warm()
	}
	in := &limitedReader{r: os.Stdin}
	dec, out := json.NewDecoder(in), json.NewEncoder(os.Stdout)
	var idle idleGiveBack
	for first := true; ; first = false {
		in.left = maxRequest
		var req request
		err := dec.Decode(&req)
		idle.before()
		if err != nil {
			if errors.Is(err, io.EOF) && !first {
				return 0 // the pool is done with it
			}
			fmt.Fprintln(os.Stderr, "render worker: reading the request:", err)
			return exitProtocol
		}
		if first {
			if code := begin(req); code != 0 {
				return code
			}
		}
		if code := serve(req, out); code != 0 {
			return code
		}
		idle.after()
	}
}

// begin sets the limits of the worker's life, at its first request.
func begin(req request) int {
	if err := setLimits(req); err != nil {
		fmt.Fprintln(os.Stderr, "render worker: setting its limits:", err)
		return exitProtocol
	}
	// The kernel's OOM killer takes a worker before the controller; the
	// repository's text reaches no log (kustomize logs names it reads).
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	catchCPU(os.Stderr)
	quiet()
	return 0
}

// enter sets what req needs of the process: a build with remote bases
// off runs offline, any other request online (see network), and the
// request's file size limit, which is only ever lowered (the pool sends
// no request that would raise it).
func enter(req request) error {
	network.set(req.Fetch != nil || req.Build != nil && req.Build.AllowRemoteBases)
	return fileSizeLimit(req.MaxFileSize)
}

// serve answers one request within its own CPU time, and gives back the
// memory it took.
func serve(req request, out *json.Encoder) int {
	resetPeak()
	if err := enter(req); err != nil {
		fmt.Fprintln(os.Stderr, "render worker:", err)
		return exitProtocol
	}
	if err := cpuLimit(req.MaxCPU); err != nil {
		fmt.Fprintln(os.Stderr, "render worker: setting its limits:", err)
		return exitProtocol
	}
	var resp response
	switch {
	case req.Build != nil:
		resp = build(*req.Build)
	case req.Fetch != nil:
		resp = fetch(*req.Fetch, out)
	default:
		fmt.Fprintln(os.Stderr, "render worker: the request holds neither a build nor a fetch")
		return exitProtocol
	}
	if err := cpuLimit(0); err != nil { // none while it waits
		fmt.Fprintln(os.Stderr, "render worker: setting its limits:", err)
		return exitProtocol
	}
	if err := out.Encode(frame{Answer: &resp}); err != nil {
		return exitProtocol // its stdout is gone: the parent reads no answer
	}
	return 0
}

// giveBackAfter is how long a worker that answered waits for its next
// request before it gives its heap back to the OS: a worker kept busy by
// its namespace's changes does not pay for it (two forced collections
// cost a new process some 15 ms each, a third of a small build), and an
// idle one holds little a second later.
const giveBackAfter = time.Second

// idleGiveBack gives the heap back once the worker waited giveBackAfter
// for its next request (after, when an answer was written; before, when
// one came): the second collection frees what the first moved to
// sync.Pools' victim caches (the encoder's buffer).
type idleGiveBack struct{ timer *time.Timer }

func (g *idleGiveBack) after() {
	g.timer = time.AfterFunc(giveBackAfter, func() {
		debug.FreeOSMemory()
		debug.FreeOSMemory()
	})
}

func (g *idleGiveBack) before() {
	if g.timer != nil {
		g.timer.Stop()
	}
}

// limitedReader bounds the bytes of one request (left is reset for each).
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errors.New("the request is larger than its bound")
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// setLimits bounds this process: the Go runtime's soft memory limit a
// little below the hard one (RLIMIT_DATA, set by rlimit), and the stack.
func setLimits(req request) error {
	if req.MaxStack > 0 {
		debug.SetMaxStack(int(req.MaxStack))
	}
	if req.MaxMemory > 0 {
		debug.SetMemoryLimit(req.MaxMemory / 10 * 8)
	}
	return rlimit(req)
}

// quiet drops what kustomize writes to the log and os.Stderr (a warning
// per deprecated field of every kustomization it loads: a repository
// could fill the head of stderr the parent keeps). The Go runtime writes
// why it dies to file descriptor 2 itself, which stays the parent's.
func quiet() {
	log.SetOutput(io.Discard)
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stderr = null
	}
}

// network is the process-wide switch between online (a fetch, a build
// with remote bases on) and offline (a build with remote bases off): no
// HTTP request and no git to run, so that such a build touches nothing but
// the repository, whatever kustomize tries. A worker serves one request
// at a time, and nothing of a request runs once its answer is written (the
// worker's build has no deadline of its own, so kustomize has returned;
// a git left running keeps the pool from reusing the worker), so the
// switch holds for the whole of each build.
var network = &networkSwitch{online: true}

type networkSwitch struct {
	online bool
	// What the process had online, put back by set(true).
	transport, client http.RoundTripper
	path              string
	hadPath           bool
}

func (n *networkSwitch) set(online bool) {
	if online == n.online {
		return
	}
	n.online = online
	if online {
		http.DefaultTransport, http.DefaultClient.Transport = n.transport, n.client
		if n.hadPath {
			_ = os.Setenv("PATH", n.path)
		} else {
			_ = os.Unsetenv("PATH")
		}
		return
	}
	n.transport, n.client = http.DefaultTransport, http.DefaultClient.Transport
	n.path, n.hadPath = os.LookupEnv("PATH")
	offline()
}

// offline refuses every HTTP request of this process and leaves it no
// git to run.
func offline() {
	refuse := roundTripper(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Redacted(), render.ErrRemoteRefused)
	})
	http.DefaultTransport = refuse
	http.DefaultClient.Transport = refuse
	_ = os.Setenv("PATH", "")
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func build(req buildRequest) response {
	o := render.Options{AllowRemoteBases: req.AllowRemoteBases, AllowFileURLs: req.AllowFileURLs,
		Revision: req.Revision, Source: req.Source, Limits: req.Limits}
	// The parent kills the worker at the deadline (Limits.Timeout is -1).
	objs, err := render.BuildContext(context.Background(), req.Root, req.Path, o)
	if err != nil {
		return response{Error: toWire(err)}
	}
	resp := response{Objects: make([]json.RawMessage, 0, len(objs))}
	for _, u := range objs {
		b, err := u.MarshalJSON()
		if err != nil {
			return response{Error: toWire(errors.Join(fmt.Errorf("encoding %s", u.GetName()), err))}
		}
		resp.Objects = append(resp.Objects, b)
	}
	return resp
}
