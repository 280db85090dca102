/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// story.go: Story, the four steps of the demo (FirstDeployment, NewImage,
// NeverReady, Fix), each with the outcome it waits for, and the figures it
// prints.

package devenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// StepTimeout bounds each step of the story.
const StepTimeout = 90 * time.Second

// The story's edits of the staging overlay, as a user would make them.
const (
	seedImage   = "image: flink:1.20.2-java17"
	newImage    = "image: flink:1.20.3-java17"
	brokenImage = "image: flink:1.20.4-java17"
	confLine    = "      flinkConfiguration:\n"
	// FaultLine makes the simulated Flink operator never report the job
	// ready, like a job that crashes on start.
	FaultLine = "        bggitops.dev/simulate-never-ready: \"true\"\n"
)

// Story is the demo, step by step. Each step pushes (except the first),
// waits for the outcome the step promises and returns its Result; an error
// says what did not happen and what was seen instead.
type Story struct {
	env *Env
	w   *watcher
	// seed is the commit the first step waits for.
	seed    Commit
	Results []Result
}

// Result is the outcome of one step.
type Result struct {
	Step   int
	Title  string
	Commit Commit
	// Took is the step's wall-clock time.
	Took time.Duration
	// Webhook, RolloutStart and RolloutStatus are measured from git push:
	// the receiver's reconcile request, the FlinkBlueGreenDeployment
	// leaving ACTIVE_*, and the rollout commit status (success or failure)
	// first read back from Gitea. Zero when not observed.
	Webhook, Applied, RolloutStart, RolloutStatus time.Duration
	// RolloutState is the state of that rollout status.
	RolloutState string
	// Before and After are the active child before and after the step.
	Before, After Child
	// World is the last observation of the step.
	World *World
}

// NewStory prepares the story on a started environment.
func (e *Env) NewStory() *Story { return e.NewStoryFrom(e.Seed) }

// NewStoryFrom prepares the story on an environment that has played it
// before: the caller removed the job and pushed c, which sets the
// repository's content back to the seed's, so the first step is again a
// first deployment, of c.
func (e *Env) NewStoryFrom(c Commit) *Story {
	return &Story{env: e, w: &watcher{env: e, seen: map[int64]bool{}}, seed: c}
}

// Run plays all four steps and prints the figures; it stops at the first
// step that fails.
func (s *Story) Run(ctx context.Context) error {
	steps := []func(context.Context) (Result, error){s.FirstDeployment, s.NewImage, s.NeverReady, s.Fix}
	var err error
	for _, step := range steps {
		if _, err = step(ctx); err != nil {
			break
		}
	}
	s.PrintFigures()
	return err
}

// FirstDeployment: the GitRepository applies the seeded commit; blue
// starts fresh; sync and rollout success statuses land on the commit.
func (s *Story) FirstDeployment(ctx context.Context) (Result, error) {
	c := s.seed
	return s.step(ctx, 1, "first deployment", c, func(r *Result) error {
		w, err := s.Wait(ctx, "ACTIVE_BLUE with sync and rollout success on "+c.Short(), StepTimeout, func(w *World) bool {
			return w.Git.Status.LastAppliedRevision == c.Revision && settledOn(w, v1alpha1.ActiveBlue, c) &&
				hasStatus(w, SyncContext, "success") && hasStatus(w, RolloutContext, "success")
		})
		if err != nil {
			return err
		}
		r.After, _ = w.Active()
		s.env.Logf("✓ %s RUNNING, fresh start (job %s); commit %s: sync success, rollout success",
			r.After.Name, r.After.JobID[:8], c.Short())
		return nil
	})
}

// NewImage: a commit changes the image; the webhook triggers the fetch;
// the active colour is savepointed, the other one starts from the
// savepoint, cut-over, rollout success.
func (s *Story) NewImage(ctx context.Context) (Result, error) {
	return s.transition(ctx, 2, "new image, blue/green from a savepoint", func() (Commit, error) {
		return s.env.Edit(ctx, PatchFile, seedImage, newImage, "staging: flink 1.20.3")
	})
}

// NeverReady: a commit whose job never becomes ready; after the abort
// grace period the transition aborts, the active colour keeps running and
// the commit gets a rollout failure with the reason.
func (s *Story) NeverReady(ctx context.Context) (Result, error) {
	before, err := s.active(ctx)
	if err != nil {
		return Result{}, err
	}
	push := func() (Commit, error) {
		patch := s.env.File(PatchFile)
		if !strings.Contains(patch, newImage) || !strings.Contains(patch, confLine) {
			return Commit{}, fmt.Errorf("%s: unexpected content", PatchFile)
		}
		patch = strings.Replace(patch, newImage, brokenImage, 1)
		patch = strings.Replace(patch, confLine, confLine+FaultLine, 1)
		return s.env.Push(ctx, map[string]string{PatchFile: patch}, "staging: flink 1.20.4 (its job never becomes ready)")
	}
	return s.pushStep(ctx, 3, "a job that never becomes ready is aborted", push, func(r *Result, c Commit) error {
		r.Before = before
		w, err := s.Wait(ctx, "abort with a rollout failure on "+c.Short(), StepTimeout, func(w *World) bool {
			st, job := w.State()
			return w.FBGD.Status.TargetRevision == c.Revision && st == stateOf(before) && job == v1alpha1.JobFailing &&
				hasStatus(w, RolloutContext, "failure")
		})
		if err != nil {
			return err
		}
		r.After, _ = w.Active()
		if r.After.Name != before.Name || r.After.JobID != before.JobID || !r.After.Running() {
			return fmt.Errorf("after the abort the active job is %s %s/%s (job %s), want %s still RUNNING (job %s)",
				r.After.Name, r.After.Lifecycle, r.After.JobState, r.After.JobID, before.Name, before.JobID)
		}
		failure, _ := w.Status(RolloutContext, "failure")
		s.env.Logf("✓ aborted: %s still RUNNING, same job %s; commit %s: rollout failure %q",
			before.Name, before.JobID[:8], c.Short(), failure.Description)
		return nil
	})
}

// Fix: a commit removes the fault; the rollout goes through.
func (s *Story) Fix(ctx context.Context) (Result, error) {
	return s.transition(ctx, 4, "the fix rolls out", func() (Commit, error) {
		return s.env.Edit(ctx, PatchFile, FaultLine, "", "staging: fix the job of flink 1.20.4")
	})
}

// transition is a push that must end in the other colour, restored from a
// savepoint of the job it replaced, with sync and rollout success.
func (s *Story) transition(ctx context.Context, n int, title string, push func() (Commit, error)) (Result, error) {
	before, err := s.active(ctx)
	if err != nil {
		return Result{}, err
	}
	want := v1alpha1.ActiveGreen
	if before.Colour == "GREEN" {
		want = v1alpha1.ActiveBlue
	}
	return s.pushStep(ctx, n, title, push, func(r *Result, c Commit) error {
		r.Before = before
		w, err := s.Wait(ctx, string(want)+" with rollout success on "+c.Short(), StepTimeout, func(w *World) bool {
			_, oldLeft := w.Children[before.Name]
			return settledOn(w, want, c) && !oldLeft &&
				hasStatus(w, SyncContext, "success") && hasStatus(w, RolloutContext, "success")
		})
		if err != nil {
			return err
		}
		r.After, _ = w.Active()
		sp, ok := s.env.Sim.Lineage().Savepoint(r.After.InitialSavepoint)
		if !ok || sp.JobID != before.JobID {
			return fmt.Errorf("%s did not restore from a savepoint of %s's job %s (initialSavepointPath %q)",
				r.After.Name, before.Name, before.JobID, r.After.InitialSavepoint)
		}
		job, _ := s.env.Sim.Lineage().Job(r.After.JobID)
		s.env.Logf("✓ %s RUNNING (job %s) from savepoint of %s's job %s at offset %d (restored offset %d); %s gone; commit %s: rollout success",
			r.After.Name, r.After.JobID[:8], before.Name, before.JobID[:8], sp.Offset, job.StartOffset, before.Name, c.Short())
		return nil
	})
}

// pushStep pushes, then runs check with the commit being followed.
func (s *Story) pushStep(ctx context.Context, n int, title string, push func() (Commit, error), check func(*Result, Commit) error) (Result, error) {
	s.header(n, title)
	c, err := push()
	if err != nil {
		return s.fail(Result{Step: n, Title: title}, time.Now(), err)
	}
	s.env.Logf("git push: %s %q", c.Short(), c.Message)
	return s.step(ctx, n, title, c, func(r *Result) error { return check(r, c) })
}

func (s *Story) step(ctx context.Context, n int, title string, c Commit, check func(*Result) error) (Result, error) {
	if n == 1 {
		s.header(n, title)
	}
	start := time.Now()
	if !c.Pushed.IsZero() && c.Pushed.Before(start) {
		start = c.Pushed
	}
	s.w.follow(c)
	r := Result{Step: n, Title: title, Commit: c}
	err := check(&r)
	r.World = s.w.prev
	m := s.w.marks
	since := func(t time.Time) time.Duration {
		if t.IsZero() {
			return 0
		}
		return t.Sub(c.Pushed)
	}
	r.Webhook, r.Applied, r.RolloutStart, r.RolloutStatus, r.RolloutState =
		since(m.webhook), since(m.applied), since(m.rolloutStart), since(m.rolloutStatus), m.rolloutState
	if err != nil {
		return s.fail(r, start, err)
	}
	r.Took = time.Since(start)
	s.Results = append(s.Results, r)
	if r.World != nil && r.World.Ingress != "" {
		s.env.Logf("Ingress %s/%s → Service %s", JobNamespace, JobName, r.World.Ingress)
	}
	s.env.Logf("step %d done in %.1fs", n, r.Took.Seconds())
	return r, nil
}

func (s *Story) fail(r Result, start time.Time, err error) (Result, error) {
	r.Took = time.Since(start)
	err = fmt.Errorf("step %d (%s): %w", r.Step, r.Title, err)
	s.env.Logf("✗ %v", err)
	return r, err
}

func (s *Story) header(n int, title string) {
	fmt.Fprintf(s.env.out, "\n── step %d/4: %s\n", n, title)
}

// active reads the active child of a settled FlinkBlueGreenDeployment.
func (s *Story) active(ctx context.Context) (Child, error) {
	w, err := s.env.Observe(ctx, "")
	if err != nil {
		return Child{}, err
	}
	// After an abort the parent's job state is FAILING while the active
	// colour still runs: that is a settled start for the next step.
	st, _ := w.State()
	c, ok := w.Active()
	if !Settled(st) || !ok || !c.Running() {
		return Child{}, errors.New("no settled, running active colour: " + describe(w))
	}
	return c, nil
}

// PrintFigures prints how long each push took to reach the cluster and
// the commit.
func (s *Story) PrintFigures() {
	out := s.env.out
	fmt.Fprintf(out, "\n── figures, measured from git push (polled every %s)\n", pollEvery)
	fmt.Fprintf(out, "  %-46s %9s %9s %14s %16s\n", "step", "webhook", "applied", "rollout start", "rollout status")
	var starts, dones []time.Duration
	for _, r := range s.Results {
		if r.Step == 1 {
			fmt.Fprintf(out, "  %-46s %s\n", fmt.Sprintf("%d %s", r.Step, r.Title), fmt.Sprintf("(from GitRepository creation: %.1fs)", r.Took.Seconds()))
			continue
		}
		fmt.Fprintf(out, "  %-46s %9s %9s %14s %16s\n", fmt.Sprintf("%d %s", r.Step, r.Title),
			secs(r.Webhook), secs(r.Applied), secs(r.RolloutStart), secs(r.RolloutStatus)+" "+r.RolloutState)
		if r.RolloutStart > 0 {
			starts = append(starts, r.RolloutStart)
		}
		if r.RolloutState == "success" {
			dones = append(dones, r.RolloutStatus)
		}
	}
	if len(starts) > 0 {
		fmt.Fprintf(out, "  git push → rollout start (savepoint requested): %s on average\n", secs(mean(starts)))
	}
	if len(dones) > 0 {
		fmt.Fprintf(out, "  git push → rollout success status on the commit: %s on average\n", secs(mean(dones)))
	}
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func secs(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func settledOn(w *World, want v1alpha1.BlueGreenState, c Commit) bool {
	st, job := w.State()
	if st != want || job != v1alpha1.JobRunning || w.FBGD.Status.ActiveRevision != c.Revision {
		return false
	}
	a, ok := w.Active()
	return ok && a.Running()
}

func hasStatus(w *World, context, state string) bool {
	_, ok := w.Status(context, state)
	return ok
}

func stateOf(c Child) v1alpha1.BlueGreenState {
	if c.Colour == "GREEN" {
		return v1alpha1.ActiveGreen
	}
	return v1alpha1.ActiveBlue
}

// Follow makes Wait report the commit statuses of c: for pushes made
// outside the four steps (the e2e suite's failure cases).
func (s *Story) Follow(c Commit) {
	s.env.Logf("git push: %s %q", c.Short(), c.Message)
	s.w.follow(c)
}
