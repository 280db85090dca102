/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// bound.go: reports cut to a size by whole lines, with a marker saying
// what was cut, so a huge head cannot make a comment the forge refuses or
// a report no one can read.

package prplan

import (
	"fmt"
	"strings"

	"bggitops.dev/bg-gitops/internal/status"
)

const (
	// maxMarkdownBytes leaves the forge's comment limit room for the
	// status package's own note.
	maxMarkdownBytes = status.MaxCommentBytes - 1000
	// maxTextBytes bounds the printed report.
	maxTextBytes = 1 << 20
)

// bound cuts s to at most limit bytes by whole lines from the end (the
// first line, the comment's marker, always stays), closes a code fence
// or a <details> block left open, and says how many lines were cut.
func bound(s string, limit int, markdown bool) string {
	if len(s) <= limit {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	const room = 300 // the closing fence, </details> and the marker
	var b strings.Builder
	fence, details := "", false
	kept := 0
	for i, l := range lines {
		if i > 0 && b.Len()+len(l)+len(fence)+room > limit {
			break
		}
		b.WriteString(l)
		kept++
		if !markdown {
			continue
		}
		t := strings.TrimSpace(l)
		switch {
		case fence == "" && strings.HasPrefix(t, "```"):
			fence = strings.TrimRight(t, "diffyamljson")
		case fence != "" && t == fence:
			fence = ""
		case fence == "" && strings.HasPrefix(t, "<details>"):
			details = true
		case fence == "" && t == "</details>":
			details = false
		}
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	if fence != "" {
		b.WriteString("  " + fence + "\n")
	}
	if details {
		b.WriteString("\n  </details>\n")
	}
	cut := len(lines) - kept
	if markdown {
		fmt.Fprintf(&b, "\n**… %d more lines of this report cut (over %d bytes); `bg-gitops plan` prints it whole.**\n", cut, limit)
	} else {
		fmt.Fprintf(&b, "\n… %d more lines of this report cut (over %d bytes)\n", cut, limit)
	}
	return b.String()
}
