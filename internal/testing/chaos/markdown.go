/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// markdown.go: Report.WriteMarkdown, the report as results.md.

package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// WriteMarkdown writes the report as results.md. title names the run
// (e.g. the make command); code says which code ran.
func (r *Report) WriteMarkdown(w io.Writer, title, code string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	r.writeSummary(&b, code)
	r.writeFigures(&b)
	writeCounts(&b, "Faults injected", "fault", r.Faults, FaultKinds())
	writeCounts(&b, "Commits pushed", "commit", r.Commits, nil)
	r.writeRollouts(&b)
	r.writeInvariants(&b)
	r.writeViolations(&b)
	r.writeProcesses(&b)
	r.writeEnd(&b)
	b.WriteString(reproducibility)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) writeSummary(b *strings.Builder, code string) {
	fmt.Fprintf(b, "Seed **%d**, fault phase **%s**, schedule digest `%s`: the same seed and duration draw the same schedule (`make chaos DURATION=%s SEED=%d`).\n\n",
		r.Seed, r.Duration, r.Digest, r.Duration, r.Seed)
	fmt.Fprintf(b, "Run %s, wall time %s: setup and first deployments %s, pushes and faults %s, coming to rest %s (%s).",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Ended.Sub(r.Started).Round(time.Second), r.SetupTook.Round(time.Second),
		r.FaultPhase.Round(time.Second), r.SettleTook.Round(time.Second), map[bool]string{true: "at rest", false: "**did not come to rest**"}[r.Settled])
	if r.Unrest != "" {
		fmt.Fprintf(b, " Still moving at the end: %s.", r.Unrest)
	}
	if code != "" {
		fmt.Fprintf(b, " Code: %s.", code)
	}
	if r.Err != nil {
		fmt.Fprintf(b, "\n\n**The run ended early: %v**", r.Err)
	}
	if r.Dir != "" {
		// Where this machine kept them is printed at the end of the run,
		// not written here: the report is committed.
		b.WriteString("\n\nThe logs of every process were kept in the directory the run printed.")
	}
	b.WriteString("\n\n")
}

func (r *Report) writeFigures(b *strings.Builder) {
	started, outcomes := r.Transitions()
	fmt.Fprintf(b, "## Figures\n\n| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, v) }
	row("commits pushed", fmt.Sprint(sum(r.Commits)))
	row("transitions (rollouts) started", fmt.Sprintf("%d (%s)", started, inline(r.rolloutKinds())))
	row("transitions completed / aborted / failed", fmt.Sprintf("%d / %d / %d", outcomes[outcomeCompleted], outcomes[outcomeAborted], outcomes[outcomeFailed]))
	row("transitions superseded / ended otherwise / unfinished", fmt.Sprintf("%d / %d / %d", outcomes[outcomeSuperseded], outcomes[outcomeOther], outcomes["unfinished"]))
	row("faults injected", fmt.Sprint(sum(r.Faults)))
	row("promotions / aborts / retries by a person", fmt.Sprintf("%d / %d / %d", r.Person["promote"], r.Person["abort"], r.Person["retry"]))
	row("jobs / savepoints the simulator recorded", fmt.Sprintf("%d / %d", r.Jobs, r.Savepoints))
	row("commit statuses posted", fmt.Sprintf("%d (%s)", sum(r.Statuses), inline(r.Statuses)))
	row("invariant checks made", fmt.Sprintf("%d in %d passes (%d while a component was down)", sum(r.Checks), r.Passes, r.Partial))
	row("**violations**", fmt.Sprintf("**%d**", len(r.Violations)))
	row("**lost commit statuses**", fmt.Sprintf("**%d**", r.Lost))
	row("**duplicated commit statuses**", fmt.Sprintf("**%d**", r.Duplicated))
	row("**process leaks after the run**", fmt.Sprintf("**%d** (of %d process groups started)", len(r.Leaks), r.Groups))
	b.WriteString("\n")
}

func (r *Report) rolloutKinds() map[string]int {
	out := map[string]int{}
	for kind, outcomes := range r.Rollouts {
		out[kind] = sum(outcomes)
	}
	return out
}

func writeCounts(b *strings.Builder, title, what string, counts map[string]int, order []string) {
	fmt.Fprintf(b, "## %s\n\n| %s | count |\n|---|---:|\n", title, what)
	keys := order
	if keys == nil {
		keys = sortedKeys(counts)
	}
	for _, k := range keys {
		fmt.Fprintf(b, "| %s | %d |\n", k, counts[k])
	}
	b.WriteString("\n")
}

func (r *Report) writeRollouts(b *strings.Builder) {
	outcomes := []string{outcomeCompleted, outcomeAborted, outcomeFailed, outcomeSuperseded, outcomeOther, "unfinished"}
	fmt.Fprintf(b, "## Transitions by kind and outcome\n\nOne per job and target revision, as the checker observed them (polled every 0.5 s): aborted by a timer or a person, failed (a savepoint, a refused spec), superseded by a newer target while in progress, ended otherwise (the status was wiped).\n\n| kind | %s |\n|---|%s\n", strings.Join(outcomes, " | "), strings.Repeat("---:|", len(outcomes)))
	for _, kind := range sortedKeys(r.Rollouts) {
		fmt.Fprintf(b, "| %s |", kind)
		for _, o := range outcomes {
			fmt.Fprintf(b, " %d |", r.Rollouts[kind][o])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func (r *Report) writeInvariants(b *strings.Builder) {
	found := map[string]int{}
	for _, v := range r.Violations {
		found[v.Invariant]++
	}
	b.WriteString("## Invariants\n\n| invariant | checks | violations |\n|---|---:|---:|\n")
	for _, inv := range Invariants() {
		fmt.Fprintf(b, "| %s | %d | %d |\n", inv, r.Checks[inv], found[inv])
	}
	b.WriteString("\n")
}

// detailed is how many violations of one invariant are shown with their
// logs; the others are listed one line each.
const detailed = 3

func (r *Report) writeViolations(b *strings.Builder) {
	b.WriteString("## Violations\n\n")
	if len(r.Violations) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	shown := map[string]int{}
	var rest []string
	for i, v := range r.Violations {
		at := v.At.Sub(r.Started).Round(100 * time.Millisecond)
		if shown[v.Invariant]++; shown[v.Invariant] > detailed {
			rest = append(rest, fmt.Sprintf("- %d. %s — %s, found at %s: %s", i+1, v.Invariant, v.Subject, at, v.Detail))
			continue
		}
		fmt.Fprintf(b, "### %d. %s\n\n%s, found at %s: %s\n\nThe run's timeline:\n\n```\n%s\n```\n\n", i+1, v.Invariant, v.Subject,
			at, v.Detail, strings.Join(v.Log, "\n"))
		if len(v.Controllers) > 0 {
			fmt.Fprintf(b, "The controllers' logs around it:\n\n```\n%s\n```\n\n", strings.Join(v.Controllers, "\n"))
		}
	}
	if len(rest) > 0 {
		fmt.Fprintf(b, "### The other violations (%d of an invariant shown above with their logs)\n\n%s\n\n", detailed, strings.Join(rest, "\n"))
	}
}

func (r *Report) writeProcesses(b *strings.Builder) {
	b.WriteString("## Processes\n\n| process | exits nobody asked for | restarts |\n|---|---:|---:|\n")
	for _, name := range sortedKeys(r.Restarts) {
		fmt.Fprintf(b, "| %s | %d | %d |\n", name, r.Exits[name], r.Restarts[name])
	}
	if len(r.FaultNotes) > 0 {
		b.WriteString("\nFaults that could not act:\n\n")
		for _, n := range r.FaultNotes {
			fmt.Fprintf(b, "- %s\n", n)
		}
	}
	if len(r.Leaks) > 0 {
		fmt.Fprintf(b, "\n**Process groups left after the run: %v**\n", r.Leaks)
	}
	b.WriteString("\n")
}

func (r *Report) writeEnd(b *strings.Builder) {
	b.WriteString("## End state\n\n| job | state, job, active revision (target, revision carried), reason still reconciling, error |\n|---|---|\n")
	keys := sortedKeys(r.FinalStates)
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "| %s | %s |\n", k, r.FinalStates[k])
	}
	b.WriteString("\n")
}

const reproducibility = `## What the seed fixes, and what it does not

The seed fixes the schedule: every commit (its repository, job, kind, content and commit date, hence its SHA), the order of the commits, every fault with its parameters, the time each is due, and each decision of the person who promotes Manual jobs. It does not fix the timing of the real processes (etcd, kube-apiserver, Gitea, the controllers and the simulator on two shared cores): which state a fault hits, how commits coalesce while a component is down, who holds the lease, and so the rollouts and figures, differ from run to run. A violation is reported with the timeline that leads to it; its seed gives the same pushes and faults, not necessarily the same interleaving.
`

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func inline(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
