/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// inject.go: nemesis.inject, which runs one fault to its end: a controller
// killed, paused or held, a process restarted, Gitea stopped, a link
// slowed.

package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// inject runs one fault to its end: the component is back (or the link
// fast again) when it returns.
func (n *nemesis) inject(ctx context.Context, f *Fault) error {
	switch f.Kind {
	case faultKillController:
		return n.killController(ctx, f.Role)
	case faultKillMidRollout:
		n.waitForRollout(ctx, 30*time.Second)
		return n.killController(ctx, "leader")
	case faultPauseController:
		return n.pauseController(ctx, f)
	case faultRestartAPI:
		return n.restart(ctx, n.e.api, f.Signal, f.Hold)
	case faultRestartEtcd:
		err := n.restart(ctx, n.e.etcd, f.Signal, f.Hold)
		return errors.Join(err, n.e.plane.WaitAPIServer(ctx))
	case faultStopGitea:
		return n.stopGitea(ctx, f.Hold)
	case faultSlowGitea:
		return n.slow(ctx, n.e.giteaLink, f)
	case faultStopGitServer:
		return n.restart(ctx, n.e.gitServer, "TERM", f.Hold)
	case faultSlowGitServer:
		return n.slow(ctx, n.e.gitLink, f)
	case faultDeleteChild:
		return n.deleteChild(ctx, f.Pick)
	case faultDeleteSnapshot:
		return n.deleteSnapshot(ctx, f.Pick)
	case faultWipeStatus:
		return n.wipeStatus(ctx, f.Pick)
	case faultHoldAPI:
		return n.holdAPI(ctx, f)
	case faultAPIErrors:
		return n.apiErrors(ctx, f.Hold)
	}
	return fmt.Errorf("unknown fault %q", f.Kind)
}

// replicaWait is how long a controller fault waits for a leader to hit
// (after an API server restart both replicas may be starting again).
const replicaWait = time.Minute

func (n *nemesis) killController(ctx context.Context, role string) error {
	r := n.waitReplica(ctx, role)
	if r == nil {
		return fmt.Errorf("no %s to kill", role)
	}
	n.tl.logf(global, "SIGKILL %s (%s, pid %d)", r.name, role, r.proc.PID())
	return r.kill()
}

func (n *nemesis) waitReplica(ctx context.Context, role string) *replica {
	deadline := time.Now().Add(replicaWait)
	for {
		if r := n.e.pickReplica(role); r != nil || time.Now().After(deadline) || !sleep(ctx, 500*time.Millisecond) {
			return r
		}
	}
}

func (n *nemesis) pauseController(ctx context.Context, f *Fault) error {
	r := n.waitReplica(ctx, f.Role)
	if r == nil {
		return fmt.Errorf("no %s to pause", f.Role)
	}
	n.tl.logf(global, "SIGSTOP %s (%s, pid %d) for %s", r.name, f.Role, r.proc.PID(), f.Hold)
	if err := r.proc.Pause(); err != nil {
		return err
	}
	sleep(ctx, f.Hold)
	n.tl.logf(global, "SIGCONT %s", r.name)
	return r.proc.Resume()
}

// restart stops a supervised process (SIGKILL, or SIGTERM and a grace),
// keeps it down for hold and starts it again, waiting until it serves.
func (n *nemesis) restart(ctx context.Context, s *supervised, signal string, hold time.Duration) error {
	s.hold()
	defer s.release()
	var err error
	if signal == "TERM" {
		err = s.proc.Stop(10 * time.Second)
	} else {
		err = s.proc.Kill()
	}
	if err != nil {
		return err
	}
	n.tl.logf(global, "%s down (SIG%s) for %s", s.name, signal, hold)
	sleep(ctx, hold)
	for ctx.Err() == nil {
		if err = s.start(ctx); err == nil {
			n.tl.logf(global, "%s up again (pid %d)", s.name, s.proc.PID())
			return nil
		}
		n.tl.logf(global, "%s did not start: %v", s.name, err)
		if s.proc.Running() {
			_ = s.proc.Kill()
		}
		sleep(ctx, 2*time.Second)
	}
	return ctx.Err()
}

func (n *nemesis) stopGitea(ctx context.Context, hold time.Duration) error {
	if err := n.e.forge.StopProcess(); err != nil {
		return err
	}
	n.tl.logf(global, "gitea down for %s", hold)
	sleep(ctx, hold)
	for ctx.Err() == nil {
		err := n.e.forge.Serve(ctx)
		if err == nil {
			process.Track(n.e.forge.PID())
			n.tl.logf(global, "gitea up again (pid %d)", n.e.forge.PID())
			return nil
		}
		n.tl.logf(global, "gitea did not start: %v", err)
		_ = n.e.forge.StopProcess()
		sleep(ctx, 2*time.Second)
	}
	return ctx.Err()
}

// holdAPI holds every request of one replica to the API server, and the
// answers, for f.Hold, then delivers them.
func (n *nemesis) holdAPI(ctx context.Context, f *Fault) error {
	r := n.waitReplica(ctx, f.Role)
	if r == nil {
		return fmt.Errorf("no %s to hold", f.Role)
	}
	n.tl.logf(global, "holding %s's API requests (%s) for %s", r.name, f.Role, f.Hold)
	r.api.Hold()
	sleep(ctx, f.Hold)
	n.tl.logf(global, "delivering %s's held API requests", r.name)
	r.api.Release()
	return nil
}

func (n *nemesis) slow(ctx context.Context, l *link, f *Fault) error {
	n.tl.logf(global, "%s link slow (+%s per read) for %s", l.name, f.Latency, f.Hold)
	l.SetLatency(f.Latency)
	sleep(ctx, f.Hold)
	l.SetLatency(0)
	return nil
}
