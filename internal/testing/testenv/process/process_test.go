/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package process_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// A process and the child it forked share a group: pausing, killing and
// stopping act on both, a restart runs the same command line again, and
// nothing is left afterwards.
func TestGroupIsSignalledKilledAndLeftEmpty(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	// The shell forks a sleep that outlives nothing: it dies with the group.
	p, err := process.Start(process.Spec{Name: "sh", Path: "/bin/sh", Log: log,
		Args: []string{"-c", `sleep 300 & echo started; wait`}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), "started") })
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	if !p.Running() {
		t.Fatal("a paused process runs")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if p.Running() {
		t.Fatal("still running after Kill")
	}
	first := p.PID()
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if p.PID() == first || p.Starts() != 2 {
		t.Fatalf("restart: pid %d (was %d), %d starts", p.PID(), first, p.Starts())
	}
	if err := p.Restart(); err == nil {
		t.Fatal("restart of a running process")
	}
	waitFor(t, func() bool { b, _ := os.ReadFile(log); return strings.Count(string(b), "started") == 2 })
	_ = p.Signal(syscall.SIGSTOP) // Stop must get through a paused group
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(process.Leaks()) == 0 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within 10s (leaks %v)", process.Leaks())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
