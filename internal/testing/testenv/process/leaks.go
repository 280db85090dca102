/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// leaks.go: the process groups started or tracked (Track, Groups), and
// Leaks and LeaksAfter, those that still have a member.

package process

import (
	"errors"
	"sort"
	"sync"
	"syscall"
	"time"
)

var started struct {
	mu     sync.Mutex
	groups map[int]bool
}

func remember(pgid int) {
	started.mu.Lock()
	defer started.mu.Unlock()
	if started.groups == nil {
		started.groups = map[int]bool{}
	}
	started.groups[pgid] = true
}

// Track remembers the process group of a child started elsewhere (e.g. by
// the Gitea harness), so that Leaks counts it too.
func Track(pgid int) {
	if pgid > 0 {
		remember(pgid)
	}
}

// Groups counts the process groups started or tracked.
func Groups() int {
	started.mu.Lock()
	defer started.mu.Unlock()
	return len(started.groups)
}

// Leaks returns the process groups started or tracked that still have a
// member (signal 0 reaches one), sorted.
func Leaks() []int {
	started.mu.Lock()
	defer started.mu.Unlock()
	var out []int
	for pgid := range started.groups {
		if err := syscall.Kill(-pgid, 0); err == nil || !errors.Is(err, syscall.ESRCH) {
			out = append(out, pgid)
		}
	}
	sort.Ints(out)
	return out
}

// LeaksAfter waits up to timeout for the groups to empty (the kernel
// reaps the members of a killed group a moment after its leader) and
// returns those that did not.
func LeaksAfter(timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		leaks := Leaks()
		if len(leaks) == 0 || time.Now().After(deadline) {
			return leaks
		}
		time.Sleep(100 * time.Millisecond)
	}
}
