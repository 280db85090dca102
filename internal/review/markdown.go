/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// markdown.go: WriteMarkdown, the report as a pull-request comment, the
// Flink jobs table first.

package review

import (
	"fmt"
	"io"
	"strings"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// WriteMarkdown writes the report as a pull-request comment (GitHub, Gitea
// and GitLab flavoured markdown).
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### bg-gitops diff `%s`\n\n", r.Path)
	fmt.Fprintf(&b, "%s → %s: ", revisionMarkdown(r.Base), revisionMarkdown(r.Head))
	if !r.HasChanges() {
		b.WriteString("**no changes**.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%s.\n", summaryText(r.Summary))
	writeJobsTable(&b, r.Objects)
	b.WriteString("\n#### Objects\n")
	for _, o := range r.Objects {
		writeMarkdownObject(&b, o)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJobsTable lists what happens to every Flink job first: that is what
// a reviewer has to approve.
func writeJobsTable(b *strings.Builder, objs []Object) {
	first := true
	for _, o := range objs {
		if o.Deployment == nil {
			continue
		}
		if first {
			b.WriteString("\n#### Flink jobs\n\n| FlinkBlueGreenDeployment | What the controller will do | Caused by |\n|---|---|---|\n")
			first = false
		}
		fields := strings.TrimSuffix(strings.TrimPrefix(fieldsText(o.Deployment.Fields, "`"), " ("), ")")
		what := "**" + o.Deployment.Description + "**"
		if c := o.Deployment.Check; c != "" {
			what += "; " + MarkdownEscape(c)
		}
		if s := o.Deployment.Settings; len(s) > 0 {
			what += "; settings: " + MarkdownEscape(strings.Join(s, "; "))
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", qualified(o), what, fields)
	}
}

func writeMarkdownObject(b *strings.Builder, o Object) {
	fmt.Fprintf(b, "\n- **%s** `%s`", o.Change, o.ID())
	if o.Deployment != nil {
		fmt.Fprintf(b, ": %s", o.Deployment.Description)
	}
	b.WriteString("\n")
	if o.Diff == "" {
		return
	}
	fence := codeFence(o.Diff)
	fmt.Fprintf(b, "\n  <details><summary>diff</summary>\n\n  %sdiff\n", fence)
	for _, line := range diffLines(o.Diff) {
		fmt.Fprintf(b, "  %s\n", line)
	}
	fmt.Fprintf(b, "  %s\n\n  </details>\n", fence)
}

func qualified(o Object) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

func revisionMarkdown(r Revision) string {
	if r.SHA == "" {
		return "`" + r.Ref + "`"
	}
	return fmt.Sprintf("`%s` (`%s`)", r.Ref, v1alpha1.ShortSHA(r.SHA))
}

// MarkdownEscape makes untrusted text (the head's values, the API
// server's messages quoting them, a pull request's title) plain text in a
// comment or a table cell: no link, image, emphasis, code span or HTML,
// and no line or cell break. Parentheses stay: without brackets they
// make no link.
func MarkdownEscape(s string) string { return markdownEscaper.Replace(s) }

var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "[", `\[`, "]", `\]`, "!", `\!`, "*", `\*`, "_", `\_`,
	"`", "\\`", "|", `\|`, "&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", " ", "\n", " ")

// codeFence is a backtick fence longer than any backtick run in s, so a
// value cannot close the block early.
func codeFence(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
			continue
		}
		run = 0
	}
	return strings.Repeat("`", max(3, longest+1))
}
