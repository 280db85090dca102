/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// text.go: WriteText, the report for a terminal or a log, with optional
// ANSI colours.

package review

import (
	"fmt"
	"io"
	"strings"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// ANSI colours, used only when the output is a terminal.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// painter colours text when enabled.
type painter bool

func (p painter) paint(colour, s string) string {
	if !p || s == "" {
		return s
	}
	return colour + s + ansiReset
}

var changeMarks = map[Change]struct{ mark, colour string }{
	Added: {"+", ansiGreen}, Changed: {"~", ansiYellow}, Removed: {"-", ansiRed},
}

// WriteText writes the report for a terminal or a log; colour adds ANSI
// colours.
func WriteText(w io.Writer, r *Report, colour bool) error {
	p := painter(colour)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s → %s\n", p.paint(ansiBold, "bg-gitops diff"), r.Path, revisionText(r.Base), revisionText(r.Head))
	if !r.HasChanges() {
		b.WriteString("No changes.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%s\n", summaryText(r.Summary))
	for _, o := range r.Objects {
		b.WriteString("\n")
		writeTextObject(&b, o, p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTextObject(b *strings.Builder, o Object, p painter) {
	m := changeMarks[o.Change]
	fmt.Fprintf(b, "%s\n", p.paint(m.colour, fmt.Sprintf("%s %s (%s)", m.mark, o.ID(), o.Change)))
	if d := o.Deployment; d != nil {
		fmt.Fprintf(b, "  → %s%s\n", p.paint(ansiBold, d.Description), fieldsText(d.Fields, ""))
		if d.Check != "" {
			fmt.Fprintf(b, "  → %s\n", d.Check)
		}
		if len(d.Settings) > 0 {
			fmt.Fprintf(b, "  → settings: %s\n", strings.Join(d.Settings, "; "))
		}
	}
	for _, line := range diffLines(o.Diff) {
		fmt.Fprintf(b, "    %s\n", p.paint(lineColour(line), line))
	}
}

func lineColour(line string) string {
	switch {
	case strings.HasPrefix(line, "@@"):
		return ansiCyan
	case strings.HasPrefix(line, "+"):
		return ansiGreen
	case strings.HasPrefix(line, "-"):
		return ansiRed
	}
	return ""
}

func diffLines(d string) []string {
	d = strings.TrimSuffix(d, "\n")
	if d == "" {
		return nil
	}
	return strings.Split(d, "\n")
}

// fieldsText lists the fields that caused an action, each quoted with q.
func fieldsText(fields []string, q string) string {
	if len(fields) == 0 {
		return ""
	}
	quoted := make([]string, len(fields))
	for i, f := range fields {
		quoted[i] = q + f + q
	}
	return " (" + strings.Join(quoted, ", ") + ")"
}

func revisionText(r Revision) string {
	if r.SHA == "" {
		return r.Ref
	}
	return fmt.Sprintf("%s (%s)", r.Ref, v1alpha1.ShortSHA(r.SHA))
}

func summaryText(s Summary) string {
	return fmt.Sprintf("%d added, %d changed, %d removed", s.Added, s.Changed, s.Removed)
}
