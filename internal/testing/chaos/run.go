/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// run.go: Run, the soak from the first process to the last: setup, the
// fault phase (runPhase), coming to rest and the final checks.

package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// Run starts the system, runs the schedule of o.Seed for o.Duration,
// lets the system come to rest, checks everything and stops every process
// it started. The report is returned even when the run failed part way
// (with Err set); the error is that of the setup or of the context.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	rep := &Report{Seed: o.Seed, Duration: o.Duration, Pace: o.Pace, Started: time.Now()}
	dir, owned, err := runDir(o.Dir)
	if err != nil {
		return rep, err
	}
	rep.Dir = dir
	logFile, err := os.Create(filepath.Join(dir, "chaos.log"))
	if err != nil {
		return rep, err
	}
	defer logFile.Close()
	tl := newTimeline(io.MultiWriter(o.Out, logFile))
	sched := NewSchedule(o.Seed, o.Duration, o.Pace)
	rep.Digest = sched.Digest()
	tl.logf(global, "seed %d, duration %s, schedule %s: %d commits, %d faults (%s)", o.Seed, o.Duration, rep.Digest,
		len(sched.all()), len(sched.Faults), filepath.Join(dir, "schedule.txt"))
	_ = os.WriteFile(filepath.Join(dir, "schedule.txt"), []byte(sched.Describe()), 0o600)

	err = soak(ctx, o, dir, tl, sched, rep)
	rep.Ended = time.Now()
	rep.Leaks, rep.Groups = process.LeaksAfter(10*time.Second), process.Groups()
	rep.Err = err
	keep := o.KeepDir || err != nil || len(rep.Violations) > 0 || len(rep.Leaks) > 0 || !rep.Settled
	tl.logf(global, "run over after %s: %d violations, %d process groups left", rep.Ended.Sub(rep.Started).Round(time.Second),
		len(rep.Violations), len(rep.Leaks))
	if owned && !keep {
		logFile.Close()
		rep.Dir = ""
		_ = os.RemoveAll(dir)
	}
	return rep, err
}

func runDir(dir string) (string, bool, error) {
	if dir != "" {
		return dir, false, os.MkdirAll(dir, 0o700)
	}
	d, err := os.MkdirTemp("", "bg-gitops-chaos-")
	return d, true, err
}

// soak is the run between the first and the last process.
func soak(ctx context.Context, o Options, dir string, tl *timeline, sched *Schedule, rep *Report) (err error) {
	setup := time.Now()
	e, err := startEnv(ctx, o, dir, tl)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.stop()) }()
	if err := e.startSources(ctx, sched, o.ReadyTimeout); err != nil {
		return err
	}
	rep.SetupTook = time.Since(setup)

	rctx, stopRecorder := context.WithCancel(ctx)
	defer stopRecorder()
	p := newPerson(e, tl, o.Seed)
	rec := newRecorder(e, tl, p)
	go rec.run(rctx)
	n := newNemesis(e, tl)
	chk := newChecker(e, tl, n, rec)
	chk.pass(ctx, "the first deployments", false)

	begin := time.Now()
	runPhase(ctx, e, tl, sched, n, chk, begin)
	rep.FaultPhase = time.Since(begin)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	settleBegin := time.Now()
	rep.Unrest = e.settle(ctx, tl, o.SettleTimeout)
	rep.Settled = rep.Unrest == ""
	rep.SettleTook = time.Since(settleBegin)
	chk.pass(ctx, "the system came to rest", true)
	stopRecorder()
	rep.collect(e, rec, n, chk, p)
	return ctx.Err()
}

// runPhase pushes the schedule's commits and injects its faults, each when
// due, and returns when both are done.
func runPhase(ctx context.Context, e *env, tl *timeline, sched *Schedule, n *nemesis, chk *checker, begin time.Time) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for _, push := range append(append([]*Push{}, sched.Pushes...), sched.Finish...) {
			if !sleep(ctx, time.Until(begin.Add(push.At))) {
				return
			}
			e.pushAndLog(ctx, tl, push)
		}
	}()
	go func() {
		defer wg.Done()
		n.run(ctx, sched.Faults, begin, func(f *Fault) { chk.pass(ctx, f.Kind, false) })
	}()
	wg.Wait()
}

// pushAndLog pushes and logs the commit; nil when the push failed.
func (e *env) pushAndLog(ctx context.Context, tl *timeline, push *Push) *Commit {
	c, err := e.git.push(ctx, push)
	if err != nil {
		tl.logf(global, "push #%d failed: %v", push.Seq, err)
		return nil
	}
	subjects := []string{push.Repo}
	for _, j := range jobsOf(push.Repo) {
		subjects = append(subjects, repoOf(push.Repo).Namespace+"/"+j.Name)
	}
	tl.logf(subjects, "pushed #%d %s to %s: %s", push.Seq, short(c.Revision), push.Repo, push.describe())
	return c
}

// startSources pushes the seed commits, creates the GitRepositories and
// waits until every job runs its first deployment.
func (e *env) startSources(ctx context.Context, sched *Schedule, timeout time.Duration) error {
	for _, p := range sched.Seeds {
		e.pushAndLog(ctx, e.tl, p)
	}
	if err := e.createSources(ctx); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ok, _ := e.allRunning(ctx); ok {
			e.tl.logf(setupLine, "every job runs its first deployment")
			return nil
		}
		if !sleep(ctx, time.Second) {
			return ctx.Err()
		}
	}
	_, why := e.allRunning(ctx)
	return fmt.Errorf("first deployments not done within %s: %s", timeout, why)
}
