/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// util.go: waitListening and sleep.

package chaos

import (
	"context"
	"fmt"
	"net"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// waitListening waits until addr accepts a connection, as long as p runs.
func waitListening(ctx context.Context, p *process.Process, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if !p.Running() {
			return fmt.Errorf("%s exited: %v", p.Name(), p.ExitErr())
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not listening on %s: %w", p.Name(), addr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
