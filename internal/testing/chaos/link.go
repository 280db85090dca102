/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// link.go: link, a TCP proxy the nemesis slows, cuts or holds, in front of
// a server or of the controllers' webhook receivers.

package chaos

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// link is a TCP proxy on 127.0.0.1 between the controllers and a server
// (Gitea, the git server, or one replica's own link to the API server) or
// between Gitea and the controllers' webhook receivers: the nemesis slows
// it down or holds what it carries, and for the receivers it is the
// Service that picks a replica that accepts.
type link struct {
	name      string
	ln        net.Listener
	upstreams func() []string
	latency   atomic.Int64                  // added before each write, in nanoseconds
	down      atomic.Bool                   // refuses every connection
	held      atomic.Pointer[chan struct{}] // closed when a hold ends

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

func newLink(name string, upstreams func() []string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{name: name, ln: ln, upstreams: upstreams, conns: map[net.Conn]bool{}}
	l.wg.Add(1)
	go l.serve()
	return l, nil
}

// URL is http://<address of the link>.
func (l *link) URL() string { return "http://" + l.ln.Addr().String() }

// SetLatency makes every read wait d before it is passed on (0: none).
func (l *link) SetLatency(d time.Duration) { l.latency.Store(int64(d)) }

// SetDown cuts the link (every connection closed, new ones refused) or
// restores it: the server is unreachable while it runs.
func (l *link) SetDown(down bool) {
	l.down.Store(down)
	if !down {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		c.Close()
	}
}

// Hold keeps every byte the link reads, both ways, until Release: a
// request sent meanwhile reaches the server late, and its answer the
// client later still (a partition, a request stuck in the network).
func (l *link) Hold() {
	ch := make(chan struct{})
	l.held.Store(&ch)
}

// Release delivers what Hold kept, in order.
func (l *link) Release() {
	if ch := l.held.Swap(nil); ch != nil {
		close(*ch)
	}
}

func (l *link) serve() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		if l.down.Load() {
			c.Close()
			continue
		}
		l.wg.Add(1)
		go func() { defer l.wg.Done(); l.pipe(c) }()
	}
}

// pipe connects c to the first upstream that accepts, both ways.
func (l *link) pipe(c net.Conn) {
	up := l.dial()
	if up == nil || !l.track(c, up) {
		c.Close()
		if up != nil {
			up.Close()
		}
		return
	}
	defer l.untrack(c, up)
	done := make(chan struct{}, 2)
	go func() { l.copy(up, c); done <- struct{}{} }()
	go func() { l.copy(c, up); done <- struct{}{} }()
	<-done
	<-done
}

func (l *link) dial() net.Conn {
	for _, addr := range l.upstreams() {
		up, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			return up
		}
	}
	return nil
}

// copy passes what src sends to dst, each read delayed by the latency and
// kept while the link is held, and half-closes dst when src ends (HTTP
// clients wait for the answer).
func (l *link) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(l.latency.Load()); d > 0 {
				time.Sleep(d)
			}
			if ch := l.held.Load(); ch != nil {
				<-*ch
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	} else {
		dst.Close()
	}
}

func (l *link) track(cs ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	for _, c := range cs {
		l.conns[c] = true
	}
	return true
}

func (l *link) untrack(cs ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(l.conns, c)
	}
}

// Close stops accepting, closes every connection and waits for the pipes.
func (l *link) Close() {
	l.Release()
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.ln.Close()
	l.wg.Wait()
}
