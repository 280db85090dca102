/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// model.go: Push, one scheduled commit, and model, which draws the commits
// of the schedule, each from the one before.

package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Push is one scheduled commit.
type Push struct {
	// At is when it is due, from the start of the fault phase (negative
	// for the seed commits).
	At time.Duration
	// Seq numbers every commit of the run from 0; the commit date derives
	// from it, so the same schedule makes the same SHAs.
	Seq  int
	Repo string
	// Kind says what the commit does (a push* constant); Job is the job it
	// changes, empty for a change of the repository.
	Kind string
	Job  string
	// Specs is every job of the repository at this commit; Broken: the
	// kustomization names a file that does not exist.
	Specs  map[string]jobSpec
	Broken bool
	// Files is the whole content of the repository at this commit.
	Files map[string]string
}

// Kinds of commit.
const (
	pushSeed        = "seed"
	pushImage       = "image"
	pushParallelism = "parallelism"
	pushPatch       = "patch-in-place"
	pushSuspend     = "suspend"
	pushResume      = "resume"
	pushRevert      = "revert"
	pushSettings    = "settings-only"
	pushBroken      = "broken-kustomization"
	pushFix         = "fix-kustomization"
	pushFinish      = "finish"
)

func (p *Push) describe() string {
	if p.Job == "" {
		return p.Kind
	}
	s := p.Specs[p.Job]
	return fmt.Sprintf("%s %s (image %d, parallelism %d, patch %d, suspended %t, fault %q)",
		p.Job, p.Kind, s.Image, s.Parallelism, s.Patch, s.Suspended, s.Fault)
}

// message is the commit message.
func (p *Push) message() string { return fmt.Sprintf("chaos #%d: %s", p.Seq, p.describe()) }

// model is the driver's view of the repositories while the schedule is
// drawn: every commit derives from the one before.
type model struct {
	rnd      *rand.Rand
	seq      int
	specs    map[string]jobSpec // by job name
	prev     map[string]jobSpec // before the job's last change, for a revert
	settings map[string]int
	broken   map[string]bool
}

func newModel(rnd *rand.Rand) *model {
	m := &model{rnd: rnd, specs: map[string]jobSpec{}, prev: map[string]jobSpec{},
		settings: map[string]int{}, broken: map[string]bool{}}
	for _, j := range jobs {
		m.specs[j.Name] = jobSpec{Image: 1, Parallelism: 2, Patch: 1}
	}
	return m
}

func (m *model) seeds() []*Push {
	var out []*Push
	for _, r := range repos {
		out = append(out, m.commit(-time.Second, r, pushSeed, ""))
	}
	return out
}

// commit records the repository's state as the next commit.
func (m *model) commit(at time.Duration, r repoDef, kind, job string) *Push {
	specs := map[string]jobSpec{}
	for _, j := range jobsOf(r.Name) {
		specs[j.Name] = m.specs[j.Name]
	}
	p := &Push{At: at, Seq: m.seq, Repo: r.Name, Kind: kind, Job: job, Specs: specs, Broken: m.broken[r.Name],
		Files: repoFiles(r, specs, m.settings[r.Name], m.broken[r.Name])}
	m.seq++
	return p
}

// next draws the commit due at at.
func (m *model) next(at time.Duration) *Push {
	r := repos[m.rnd.IntN(len(repos))]
	switch x := m.rnd.Float64(); {
	case m.broken[r.Name]:
		m.broken[r.Name] = false
		return m.commit(at, r, pushFix, "")
	case x < 0.07:
		m.broken[r.Name] = true
		return m.commit(at, r, pushBroken, "")
	case x < 0.15:
		m.settings[r.Name]++
		return m.commit(at, r, pushSettings, "")
	}
	js := jobsOf(r.Name)
	j := js[m.rnd.IntN(len(js))]
	kind := m.change(j)
	return m.commit(at, r, kind, j.Name)
}

// changeWeights are the relative odds of each change of a running job.
var changeWeights = []struct {
	kind     string
	weight   int
	stateful bool // only for stateful jobs (a savepoint fault)
}{
	{pushImage, 24, false}, {pushParallelism, 10, false}, {pushPatch, 12, false},
	{pushSuspend, 8, false}, {pushRevert, 10, false},
	{faultNeverReady, 9, false}, {faultFlap, 7, false},
	{faultSavepointFail, 4, true}, {faultSavepointHang, 3, true}, {faultSavepointSlow, 3, true},
}

// change draws a change of job j, applies it to the model and returns its
// kind. A fault in the spec lasts until the job's next change.
func (m *model) change(j jobDef) string {
	old := m.specs[j.Name]
	s := old
	s.Fault = faultNone
	kind := m.drawKind(j, old)
	switch kind {
	case pushResume:
		s.Suspended = false
		if m.rnd.IntN(3) == 0 {
			s.Image++
		}
	case pushImage:
		s.Image++
	case pushParallelism:
		s.Parallelism = 1 + s.Parallelism%4
	case pushPatch:
		s.Patch++
	case pushSuspend:
		s.Suspended = true
	case pushRevert:
		s = m.prev[j.Name]
	default: // a fault, carried by a new image
		s.Image++
		s.Fault = kind
	}
	m.prev[j.Name], m.specs[j.Name] = old, s
	return kind
}

func (m *model) drawKind(j jobDef, s jobSpec) string {
	if s.Suspended {
		return pushResume
	}
	total := 0
	for _, w := range changeWeights {
		if !w.stateful || j.Stateful {
			total += w.weight
		}
	}
	x := m.rnd.IntN(total)
	for _, w := range changeWeights {
		if w.stateful && !j.Stateful {
			continue
		}
		if x < w.weight {
			return m.usable(j, w.kind)
		}
		x -= w.weight
	}
	return pushImage
}

// usable falls back to an image change where a kind does not apply: a
// revert with nothing to revert to, an in-place patch that would also
// remove a fault (that makes it a transition).
func (m *model) usable(j jobDef, kind string) string {
	prev, ok := m.prev[j.Name]
	switch {
	case kind == pushRevert && (!ok || prev == m.specs[j.Name] || prev.Suspended):
		return pushImage
	case kind == pushPatch && m.specs[j.Name].Fault != faultNone:
		return pushImage
	}
	return kind
}

// finish brings every job back to a plain running spec with a new image,
// in two commits per repository, gap apart: a savepoint fault left in a
// running colour fails the first rollout, never the second.
func (m *model) finish(d, gap time.Duration) []*Push {
	var out []*Push
	for round := range 2 {
		for i, r := range repos {
			m.broken[r.Name] = false
			for _, j := range jobsOf(r.Name) {
				s := m.specs[j.Name]
				s.Suspended, s.Fault = false, faultNone
				s.Image++
				m.prev[j.Name], m.specs[j.Name] = m.specs[j.Name], s
			}
			at := d + time.Duration(round)*gap + time.Duration(i)*5*time.Second
			out = append(out, m.commit(at, r, pushFinish, ""))
		}
	}
	return out
}
