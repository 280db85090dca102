/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// window.go: rollout windows — WindowState, whether now lies in one of the
// cron windows and when the next opens, and holding new colours while closed.

package bluegreen

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // rollout windows name IANA zones; do not depend on the image having a zoneinfo database

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	"github.com/robfig/cron/v3"
)

// maxWindowDuration bounds a window so that finding the window around an
// instant stays cheap; a window longer than a year is no window.
const maxWindowDuration = 366 * 24 * time.Hour

type window struct {
	sched cron.Schedule
	dur   time.Duration
	loc   *time.Location
	zone  string
}

// WindowState reports whether now lies inside one of the rollout windows
// (a window is [start, start+duration) for every start of its cron
// schedule, evaluated in its IANA time zone, UTC by default) and, if not,
// when the next one opens. No windows means always open.
func WindowState(windows []v1alpha1.RolloutWindow, now time.Time) (Window, error) {
	if len(windows) == 0 {
		return Window{Open: true}, nil
	}
	parsed := make([]window, 0, len(windows))
	for i, rw := range windows {
		w, err := parseWindow(rw)
		if err != nil {
			return Window{}, fmt.Errorf("rolloutWindows[%d]: %w", i, err)
		}
		parsed = append(parsed, w)
	}
	for _, w := range parsed {
		if start, ok := w.openAt(now); ok {
			return Window{Open: true, Description: "inside rollout window " + w.span(start)}, nil
		}
	}
	return nextWindow(parsed, now)
}

func nextWindow(ws []window, now time.Time) (Window, error) {
	var best time.Time
	var bw window
	for _, w := range ws {
		n := w.sched.Next(now)
		if n.IsZero() {
			continue
		}
		if best.IsZero() || n.Before(best) {
			best, bw = n, w
		}
	}
	if best.IsZero() {
		return Window{}, errors.New("no rollout window opens within the next five years")
	}
	return Window{
		OpensAt:     best,
		Description: fmt.Sprintf("waiting for rollout window %s (opens %s)", bw.span(best), best.In(bw.loc).Format(time.RFC3339)),
	}, nil
}

func parseWindow(rw v1alpha1.RolloutWindow) (window, error) {
	d := rw.Duration.Duration
	if d <= 0 || d > maxWindowDuration {
		return window{}, fmt.Errorf("duration %s: must be positive and at most %s", d, maxWindowDuration)
	}
	zone := rw.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	if zone == "Local" {
		return window{}, errors.New(`timeZone "Local" depends on the controller's host; name an IANA zone`)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return window{}, fmt.Errorf("timeZone %q: %w", zone, err)
	}
	spec := strings.TrimSpace(rw.Schedule)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return window{}, fmt.Errorf("schedule %q: set timeZone instead of a TZ prefix", rw.Schedule)
	}
	if strings.HasPrefix(spec, "@every") {
		return window{}, fmt.Errorf("schedule %q: @every has no fixed start; use a cron expression", rw.Schedule)
	}
	sched, err := parseCron("CRON_TZ=" + zone + " " + spec)
	if err != nil {
		return window{}, fmt.Errorf("schedule %q: %w", rw.Schedule, err)
	}
	return window{sched: sched, dur: d, loc: loc, zone: zone}, nil
}

// parseCron turns a panic of the cron parser on hostile input into an error.
func parseCron(spec string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("unparsable: %v", r)
		}
	}()
	return cron.ParseStandard(spec)
}

// openAt returns the start of the window containing now. The first start
// after now-duration is the only candidate: any later start is after now.
func (w window) openAt(now time.Time) (time.Time, bool) {
	s := w.sched.Next(now.Add(-w.dur))
	if s.IsZero() || s.After(now) {
		return time.Time{}, false
	}
	return s, true
}

func (w window) span(start time.Time) string {
	s, e := start.In(w.loc), start.Add(w.dur).In(w.loc)
	return s.Format("15:04") + "–" + e.Format("15:04") + " " + w.zone
}

// closedToNewColour reports a spec committed after the rollout window
// closed (not yet handled) that needs a new colour beside oc, the colour
// that runs: no new colour starts, nor is re-specced, for it until the
// window opens. The transition under way goes on with the spec it
// started with, or ends before it started one (closedMessage).
func (d *decider) closedToNewColour(oc *Child) bool {
	return !d.in.Window.Open && d.specPending() && oc != nil && !oc.Deleting && d.needsNewColour(oc)
}

func (d *decider) closedMessage() string {
	return "superseded by " + revOr(d.revision()) + ", committed after the rollout window closed: no new colour starts until it opens"
}
