/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// report.go: a Result's one-line summary, its Markdown report (the pull
// request's comment) and its text report (`bg-gitops plan`).

package prplan

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"bggitops.dev/bg-gitops/internal/review"
)

// maxSummary is the length a commit status description holds.
const maxSummary = 140

// Summary is one line (at most 140 bytes) for the commit status: what the
// change does to the running jobs, or why it fails.
func (r *Result) Summary() string {
	return clip(r.summary(), maxSummary)
}

func (r *Result) summary() string {
	if len(r.Refused) > 0 {
		f := r.Refused[0]
		more := ""
		if n := len(r.Refused); n > 1 {
			more = fmt.Sprintf(" (and %d more)", n-1)
		}
		return fmt.Sprintf("dry-run refused %s%s: %s", f.Object, more, oneLine(f.Reason))
	}
	var parts []string
	for _, j := range r.Jobs {
		if j.StopsWithoutSavepoint {
			parts = append(parts, j.Name+": stops its job without a savepoint")
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	for _, j := range r.Jobs {
		parts = append(parts, j.Name+": "+j.short())
	}
	if others := r.others(); others != "" {
		parts = append(parts, others)
	}
	if len(parts) == 0 {
		return "no change to the cluster"
	}
	return strings.Join(parts, "; ")
}

// short is the job's action in a few words.
func (j Job) short() string {
	switch j.Action {
	case review.ActionTransitionSavepoint:
		if j.Running != "" {
			return "blue/green with savepoint from " + j.Running
		}
		return "blue/green with savepoint"
	case review.ActionTransitionStateless:
		return "blue/green, stateless"
	case review.ActionNothing:
		return "no change to the job"
	case review.ActionDelete:
		if j.Running != "" {
			return "removed, stops " + j.Running
		}
		return "removed"
	}
	return strings.ReplaceAll(string(j.Action), "-", " ")
}

// others counts the objects that are not FlinkBlueGreenDeployments, by
// kind and change: "1 ConfigMap changed, 2 Services added".
func (r *Result) others() string {
	counts, order := map[string]int{}, []string{}
	for _, o := range r.Report.Objects {
		if o.Deployment != nil {
			continue
		}
		k := o.Kind + "\x00" + string(o.Change)
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	var out []string
	for _, k := range order {
		kind, change, _ := strings.Cut(k, "\x00")
		if counts[k] > 1 {
			kind += "s"
		}
		out = append(out, fmt.Sprintf("%d %s %s", counts[k], kind, change))
	}
	return strings.Join(out, ", ")
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…"
	s = s[:n-len(more)]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + more
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
