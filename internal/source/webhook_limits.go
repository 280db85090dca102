/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// webhook_limits.go: ReceiverLimits and the gate that enforces them —
// concurrent requests, buffered body bytes, a rate per webhook path.

package source

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Receiver limit defaults (see ReceiverLimits) and the names of the flags
// that set them.
const (
	// DefaultMaxConcurrent requests are handled at once.
	DefaultMaxConcurrent = 32
	// DefaultMaxBufferedBytes of bodies are held at once: 16 bodies of
	// DefaultMaxBodyBytes.
	DefaultMaxBufferedBytes = 16 << 20
	// DefaultPathRate is the requests per second one webhook path is
	// answered, after a burst of DefaultPathBurst: a forge sends one
	// delivery per push, a push of many refs a few.
	DefaultPathRate  = 1.0
	DefaultPathBurst = 10

	FlagReceiverMaxConcurrent    = "receiver-max-concurrent"
	FlagReceiverMaxBufferedBytes = "receiver-max-buffered-bytes"
	FlagReceiverRateLimit        = "receiver-rate-limit"
	FlagReceiverRateBurst        = "receiver-rate-burst"
)

// maxTrackedPaths is how many webhook paths have a rate limiter before
// those that are full again (idle) are dropped. Only paths of existing
// GitRepositories get one, so unknown paths cannot grow the map.
const maxTrackedPaths = 4096

// ReceiverLimits bound what senders, who may be anyone on the internet,
// hold on a Receiver. A zero field takes its default; a negative one is no
// limit.
type ReceiverLimits struct {
	// MaxConcurrent bounds the requests handled at once (503 beyond).
	MaxConcurrent int
	// MaxBufferedBytes bounds the body bytes all requests hold at once: a
	// request reserves its Content-Length (MaxBodyBytes when it sends
	// none) before it reads its body, and is answered 503 when that does
	// not fit; a body larger than MaxBufferedBytes itself is answered 413.
	MaxBufferedBytes int64
	// PathRate is the requests per second answered on one webhook path
	// after a burst of PathBurst (429 beyond), so that a flood on one
	// path leaves the others their share.
	PathRate  float64
	PathBurst int
}

// receiverGate enforces ReceiverLimits.
type receiverGate struct {
	slots chan struct{} // nil: no bound
	rate  rate.Limit
	burst int

	mu          sync.Mutex
	buffered    int64
	maxBuffered int64 // negative: no bound
	paths       map[string]*rate.Limiter
}

func newReceiverGate(l ReceiverLimits) *receiverGate {
	g := &receiverGate{maxBuffered: orDefault(l.MaxBufferedBytes, DefaultMaxBufferedBytes), paths: map[string]*rate.Limiter{}}
	if n := orDefault(l.MaxConcurrent, DefaultMaxConcurrent); n > 0 {
		g.slots = make(chan struct{}, n)
	}
	g.rate, g.burst = rate.Inf, 0
	if r := orDefault(l.PathRate, DefaultPathRate); r > 0 {
		g.rate, g.burst = rate.Limit(r), max(orDefault(l.PathBurst, DefaultPathBurst), 1)
	}
	return g
}

func orDefault[T int | int64 | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// busy is the answer to a request refused for want of room: the sender
// may try again after the Retry-After it names.
func busy(code int, retryAfter time.Duration, msg string) error {
	return &httpError{code: code, msg: msg, retryAfter: retryAfter}
}

// enter takes one of the concurrent request slots; release gives it back.
func (g *receiverGate) enter() (release func(), err error) {
	if g.slots == nil {
		return func() {}, nil
	}
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	default:
		return nil, busy(http.StatusServiceUnavailable, time.Second, "too many webhook requests at once")
	}
}

// reserve holds n body bytes of the budget; free gives them back once the
// body is no longer held.
func (g *receiverGate) reserve(n int64) (free func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxBuffered >= 0 && g.buffered+n > g.maxBuffered {
		return nil, busy(http.StatusServiceUnavailable, time.Second, "too many webhook bodies at once")
	}
	g.buffered += n
	return func() {
		g.mu.Lock()
		g.buffered -= n
		g.mu.Unlock()
	}, nil
}

// allow takes a token of path's bucket.
func (g *receiverGate) allow(path string, now time.Time) error {
	if g.rate == rate.Inf {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	lim, ok := g.paths[path]
	if !ok {
		g.dropIdle(now)
		lim = rate.NewLimiter(g.rate, g.burst)
		g.paths[path] = lim
	}
	if lim.AllowN(now, 1) {
		return nil
	}
	wait := time.Duration(math.Ceil(float64(time.Second) / float64(g.rate)))
	return busy(http.StatusTooManyRequests, wait, "too many webhook requests on this path")
}

// dropIdle forgets the limiters whose bucket is full again, once there
// are many: a new one for their path starts full too.
func (g *receiverGate) dropIdle(now time.Time) {
	if len(g.paths) < maxTrackedPaths {
		return
	}
	for p, lim := range g.paths {
		if lim.TokensAt(now) >= float64(g.burst) {
			delete(g.paths, p)
		}
	}
}

// retryAfterSeconds is the Retry-After header's value: whole seconds, at
// least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(int(math.Ceil(d.Seconds())), 1))
}
