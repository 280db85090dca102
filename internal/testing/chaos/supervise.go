/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// supervise.go: supervised, which starts a process again when it exits, as
// a kubelet would, unless the nemesis holds it down or the run is ending.

package chaos

import (
	"context"
	"sync"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// supervised restarts a process that exits, as a kubelet restarts a
// container: after a short back-off, unless the nemesis holds it down or
// the run is ending. Exits nobody asked for (a crash, a controller that
// lost its leader election) are counted.
type supervised struct {
	name    string
	proc    *process.Process
	start   func(context.Context) error // starts proc again and waits until it serves
	backoff time.Duration
	tl      *timeline

	mu       sync.Mutex
	held     bool
	expected bool // the next exit was asked for (a nemesis kill)
	stopping bool
	exits    int
	restarts int
	released chan struct{}
}

func newSupervised(name string, proc *process.Process, start func(context.Context) error, tl *timeline) *supervised {
	return &supervised{name: name, proc: proc, start: start, backoff: 2 * time.Second, tl: tl, released: make(chan struct{})}
}

// watch restarts the process until ctx ends or stop is called.
func (s *supervised) watch(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.proc.Done():
		}
		if !s.afterExit(ctx) {
			return
		}
	}
}

// afterExit waits out a hold and the back-off and starts the process
// again; false when the run is ending.
func (s *supervised) afterExit(ctx context.Context) bool {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return false
	}
	if !s.expected && !s.held {
		s.exits++
		s.tl.logf([]string{s.name}, "%s exited by itself (%v); restarting in %s", s.name, s.proc.ExitErr(), s.backoff)
	}
	s.expected = false
	released := s.released
	held := s.held
	s.mu.Unlock()
	if held {
		select {
		case <-ctx.Done():
			return false
		case <-released:
		}
		if s.proc.Running() { // the holder started it again
			return true
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(s.backoff):
	}
	return s.restart(ctx)
}

func (s *supervised) restart(ctx context.Context) bool {
	for {
		err := s.start(ctx)
		if err == nil {
			s.mu.Lock()
			s.restarts++
			s.mu.Unlock()
			return true
		}
		if ctx.Err() != nil || s.isStopping() {
			return false
		}
		s.tl.logf([]string{s.name}, "%s did not start: %v; again in %s", s.name, err, s.backoff)
		if s.proc.Running() {
			_ = s.proc.Kill()
		}
		time.Sleep(s.backoff)
	}
}

// kill SIGKILLs the process; the watcher starts it again (unless held).
func (s *supervised) kill() error {
	s.mu.Lock()
	s.expected = true
	s.mu.Unlock()
	return s.proc.Kill()
}

// hold keeps the process down after the next exit until release; the
// holder may start it again itself before it releases it.
func (s *supervised) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held, s.expected = true, true
}

func (s *supervised) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		s.held = false
		close(s.released)
		s.released = make(chan struct{})
	}
}

func (s *supervised) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// stop ends supervision and stops the process (SIGTERM, SIGKILL after
// timeout).
func (s *supervised) stop(timeout time.Duration) error {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	s.release()
	return s.proc.Stop(timeout)
}

// counts returns the exits nobody asked for and the restarts.
func (s *supervised) counts() (exits, restarts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exits, s.restarts
}
