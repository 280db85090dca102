/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// markdown.go: the Markdown report of a plan (the pull request's comment)
// and its text form (`bg-gitops plan`).

package prplan

import (
	"fmt"
	"strings"

	"bggitops.dev/bg-gitops/internal/review"
)

// Markdown is the report of the plan comment: the marker line first, then
// the live facts and the diff (review.WriteMarkdown), cut by whole lines
// to fit a forge comment.
func (r *Result) Markdown(marker string) string {
	var b strings.Builder
	b.WriteString(marker + "\n")
	fmt.Fprintf(&b, "## bg-gitops plan: %s\n\n", r.Outcome())
	fmt.Fprintf(&b, "%s at `%s`: %s\n", mdEscape(r.prLine()), revision(r.Report.Head), mdEscape(r.Summary()))
	if len(r.Jobs) > 0 {
		b.WriteString("\n| Job | Action | Live state |\n|---|---|---|\n")
		for _, j := range r.Jobs {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdEscape(j.Namespace+"/"+j.Name), j.actionCell(), cell(j.Facts))
		}
	}
	if len(r.Refused) > 0 {
		b.WriteString("\n**The dry-run (server-side, as the applying identity) refused:**\n\n")
		for _, f := range r.Refused {
			fmt.Fprintf(&b, "- %s: %s\n", mdEscape(f.Object), mdEscape(oneLine(f.Reason)))
		}
	}
	if len(r.Unchecked) > 0 {
		b.WriteString("\n**The dry-run could not judge:**\n\n")
		for _, f := range r.Unchecked {
			fmt.Fprintf(&b, "- %s: %s\n", mdEscape(f.Object), mdEscape(oneLine(f.Reason)))
		}
	}
	b.WriteString("\n")
	_ = review.WriteMarkdown(&b, r.Report) // a strings.Builder does not fail
	return bound(b.String(), maxMarkdownBytes, true)
}

// Text is the report `bg-gitops plan` prints.
func (r *Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %s\n%s at %s: %s\n", r.Outcome(), r.prLine(), revision(r.Report.Head), r.Summary())
	for _, j := range r.Jobs {
		fmt.Fprintf(&b, "\njob %s/%s: %s\n", j.Namespace, j.Name, j.actionText())
		for _, f := range j.Facts {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	if len(r.Refused) > 0 {
		b.WriteString("\nthe dry-run (server-side, as the applying identity) refused:\n")
		for _, f := range r.Refused {
			fmt.Fprintf(&b, "  - %s: %s\n", f.Object, oneLine(f.Reason))
		}
	}
	if len(r.Unchecked) > 0 {
		b.WriteString("\nthe dry-run could not judge:\n")
		for _, f := range r.Unchecked {
			fmt.Fprintf(&b, "  - %s: %s\n", f.Object, oneLine(f.Reason))
		}
	}
	b.WriteString("\n")
	_ = review.WriteText(&b, r.Report, false)
	return bound(b.String(), maxTextBytes, false)
}

func (r *Result) prLine() string {
	if r.pr.Number == 0 {
		return "head"
	}
	s := fmt.Sprintf("pull request #%d", r.pr.Number)
	if r.pr.Title != "" {
		s += fmt.Sprintf(" (%s)", oneLine(r.pr.Title))
	}
	return s
}

func (j Job) actionText() string {
	if j.StopsWithoutSavepoint {
		return j.short() + " (stops a job without a savepoint)"
	}
	return j.short()
}

func (j Job) actionCell() string {
	if j.StopsWithoutSavepoint {
		return mdEscape(j.short()) + " — **stops a job without a savepoint**"
	}
	return mdEscape(j.short())
}

func revision(r review.Revision) string {
	if r.SHA == "" {
		return r.Ref
	}
	sha := r.SHA
	if len(sha) > 12 {
		sha = sha[:12]
	}
	return r.Ref + "@" + sha
}

// cell joins facts for one table cell.
func cell(facts []string) string {
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = mdEscape(f)
	}
	return strings.Join(out, "<br>")
}

// mdEscape keeps text from breaking a table or injecting markup (links,
// images, emphasis, code, HTML): a pull request's title, the head's values
// and the API server's messages quoting them are untrusted.
func mdEscape(s string) string { return review.MarkdownEscape(s) }
