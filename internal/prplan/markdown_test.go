/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// markdown_test.go: the plan comment with untrusted text in it, and cut
// to the forge's size.

package prplan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/status"
)

// A refusal quotes the head's values: a hostile PR must not put a
// tracking image or a phishing link into the comment the bot posts.
func TestARefusalQuotingTheHeadCannotInjectMarkdown(t *testing.T) {
	ns := reconcileNS(t)
	cm := configMap(ns, "evil")
	cm.Labels = map[string]string{"x": "![a](https://e.example/p.png)"}
	r := plan(t, prplan.Input{}, object(t, cm))
	require.Len(t, r.Refused, 1)
	md := r.Markdown("<!-- m -->")
	t.Logf("%s", md)
	assert.NotContains(t, md, "![a](https://e.example/p.png)")
}

// A head of thousands of objects: the comment fits the forge's limit with
// room left, the marker line stays first, whole lines are cut and a marker
// says so; the printed report is bounded too.
func TestALongReportIsCutByWholeLines(t *testing.T) {
	r := &prplan.Result{Report: &review.Report{}}
	for i := range 5000 {
		name := fmt.Sprintf("cm-%04d-%s", i, strings.Repeat("x", 200))
		r.Report.Objects = append(r.Report.Objects, review.Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: name,
			Change: review.Added, Diff: "+data:\n+  k: " + name + "\n"})
	}
	r.Report.Summary = review.Summary{Added: 5000}
	md := r.Markdown("<!-- m -->")
	assert.LessOrEqual(t, len(md), status.MaxCommentBytes-500)
	assert.True(t, strings.HasPrefix(md, "<!-- m -->\n"))
	assert.Contains(t, md, "more lines of this report cut")
	assert.Equal(t, strings.Count(md, "<details>"), strings.Count(md, "</details>"), "no block left open")
	txt := r.Text()
	assert.LessOrEqual(t, len(txt), 1<<20)
	assert.Contains(t, txt, "more lines of this report cut")
}
