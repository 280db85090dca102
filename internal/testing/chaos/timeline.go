/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// timeline.go: timeline, the run's log, each line with its time and
// subjects, and the excerpt of it a violation is shown with.

package chaos

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// timeline is the run's log: what was pushed, injected, observed and
// found, each line with the time since the start and the subjects it is
// about (a job as namespace/name, a repository, a component), so that a
// violation can be shown with the few lines that lead to it.
type timeline struct {
	start time.Time
	w     io.Writer

	mu    sync.Mutex
	lines []entryLine
}

type entryLine struct {
	at       time.Time
	subjects []string
	text     string
}

func newTimeline(w io.Writer) *timeline { return &timeline{start: time.Now(), w: w} }

// logf writes one line about subjects ("" for the run as a whole).
func (t *timeline) logf(subjects []string, format string, args ...any) {
	now := time.Now()
	text := fmt.Sprintf(format, args...)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, entryLine{at: now, subjects: subjects, text: text})
	fmt.Fprintf(t.w, "%s\n", t.format(entryLine{at: now, text: text}))
}

func (t *timeline) format(l entryLine) string {
	return fmt.Sprintf("[%7.1fs] %s", l.at.Sub(t.start).Seconds(), l.text)
}

// since is the time of t relative to the start, as the log prints it.
func (t *timeline) since(at time.Time) string {
	return fmt.Sprintf("%.1fs", at.Sub(t.start).Seconds())
}

// excerpt returns the last max lines up to until that are about one of
// subjects or about the run as a whole (faults, restarts).
func (t *timeline) excerpt(subjects []string, until time.Time, max int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for i := len(t.lines) - 1; i >= 0 && len(out) < max; i-- {
		l := t.lines[i]
		if l.at.After(until) || !about(l.subjects, subjects) {
			continue
		}
		out = append(out, t.format(l))
	}
	slices.Reverse(out)
	return out
}

func about(line, wanted []string) bool {
	if len(line) == 0 {
		return true
	}
	for _, s := range line {
		if slices.Contains(wanted, s) {
			return true
		}
	}
	return false
}

// global marks a line about the run as a whole (faults, restarts): every
// excerpt shows it. checkerLine and setupLine mark lines no excerpt needs.
var (
	global      []string
	checkerLine = []string{"(checker)"}
	setupLine   = []string{"(setup)"}
)
