/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// check_world.go: checkChildren (one child per colour, named after it) and
// checkTimers (a rollout ends within its timers plus the outage).

package chaos

import (
	"fmt"
	"strings"
	"time"
)

// colourLabel is the label FLIP-503 puts on each child.
const colourLabel = "flink/blue-green-deployment-type"

// checkChildren: every job has at most one child per colour, named after
// its colour; and (the lineage) no child runs two jobs at once.
func (c *checker) checkChildren(w *world) {
	byJob := map[string]map[string][]string{} // job → colour → children
	for _, u := range w.children {
		key := jobKeyOfChild(u.GetNamespace(), u.GetName())
		if _, ok := jobByName(splitKey(key)); !ok {
			continue
		}
		colour := u.GetLabels()[colourLabel]
		if byJob[key] == nil {
			byJob[key] = map[string][]string{}
		}
		byJob[key][colour] = append(byJob[key][colour], u.GetName())
	}
	for _, j := range jobs {
		key := repoOf(j.Repo).Namespace + "/" + j.Name
		c.count(invOneChildColour)
		for colour, names := range byJob[key] {
			want := j.Name + "-" + strings.ToLower(colour)
			if len(names) > 1 || names[0] != want {
				c.violate(invOneChildColour, fmt.Sprintf("%s|%s|%v", key, colour, names), key,
					"children labelled %q: %v (want one, %s)", colour, names, want)
			}
		}
	}
}

// checkTimers: a rollout ends within savepoint timeout + grace period +
// deletion delay + a reconcile interval, plus the outage the faults caused
// while it ran, plus slack for the machine. In Manual mode the clock stops
// once the new colour waits for a person.
func (c *checker) checkTimers(final bool) {
	now := time.Now()
	for _, ep := range c.rec.snapshot() {
		key := fmt.Sprintf("timer|%s|%s", ep.job, ep.start)
		if c.judged[key] {
			continue
		}
		end := ep.end
		if end.IsZero() {
			end = now
		}
		if !ep.firstWaiting.IsZero() {
			end = ep.firstWaiting
		}
		c.count(invTimers)
		took := end.Sub(ep.start)
		outage := c.n.outageWithin(ep.start, end)
		if bound := timerBound + outage + timerSlack; took > bound {
			c.violateAt(invTimers, key, []string{ep.job}, end, "rollout of %s (%s) took %.0fs, more than %.0fs (timers %.0fs + outage %.0fs + slack %.0fs)",
				short(ep.target), ep.kind, took.Seconds(), bound.Seconds(), timerBound.Seconds(), outage.Seconds(), timerSlack.Seconds())
			c.judged[key] = true
			continue
		}
		if !ep.end.IsZero() || !ep.firstWaiting.IsZero() {
			c.judged[key] = true
		}
	}
}

// timerBound is the sum of every job's timers (scenario.go): savepoint
// timeout 15 s, grace period 20 s, deletion delay 1 s and a reschedule
// interval of 5 s; timerSlack covers a controller and a simulator sharing
// two cores with everything else.
const (
	timerBound = 41 * time.Second
	timerSlack = 30 * time.Second
)
