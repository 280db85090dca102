/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// forms.go: the forms a secret value is looked for in (raw, base64, quoted,
// JSON-escaped, per line, anchors of long spellings) and the collector that
// bounds one source's forms.

package redact

import (
	"encoding/base64"
	"encoding/json"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// What one value costs the registry, and what one source of values may
// cost. A value is kept as its spellings (raw, base64, quoted...), which
// came to about 8.7 times its bytes; a long spelling is kept as two
// anchors instead, so a long value costs about its lines.
const (
	// maxWholeForm: spellings up to this length are matched whole,
	// delimited at both ends (see Scrubber.string): passwords, tokens,
	// usernames. Longer ones (certificates, keys, bundles, files) cannot
	// be whole in an event (its note holds 1 KiB), a commit status (140
	// characters) or a forge error (200), only in a condition (32 KiB) or
	// a log line. They are matched by their anchors, which redact a whole
	// spelling as surely and one cut short better, for 256 bytes a
	// spelling instead of its length.
	maxWholeForm = 1 << 10
	// anchorLen: an anchor is long enough to name its value (a PEM header
	// is 27-36 bytes, random text follows) and short enough that a long
	// spelling costs two small forms.
	anchorLen = 64
	// formOverhead is what a form costs beside its text: its entry in the
	// matcher's list and index, and the allocation's rounding.
	formOverhead = 64
	// maxSourceForms and maxSourceBytes (of forms, see formCost) bound
	// one source of values: a GitRepository's render, the generator
	// values of its failed build, a Secret the controller read. They
	// hold the values of 780 TLS Secrets (certificate, key, CA and a
	// password: 84 forms, 10.7 KiB) or of 32,768 passwords; beyond, the
	// source's messages are withheld.
	maxSourceForms = 65536
	maxSourceBytes = 8 << 20
)

// A form is what the Scrubber looks for: one spelling of a secret value,
// or, for a spelling longer than maxWholeForm, one of its anchors, its
// first or last anchorLen bytes. An anchor found redacts the span the
// whole spelling would cover from there, so the value is Redacted whole
// (or what of it the message holds, cut short) while the registry keeps
// 128 bytes of it.
type form struct {
	text string
	// span is 0 for a whole spelling; for an anchor, the length of the
	// spelling, negative for its last bytes.
	span int
}

// valueForms are the forms of one value an error message may hold.
func valueForms(v string) []form { return slices.Collect(formsOf(v)) }

// formsOf yields the forms of v: raw and trimmed of surrounding space,
// each as is, in base64 (as in a Secret's data), quoted and JSON-escaped;
// and each line of a multi-line value (keys, certificates), which an
// error may quote alone. Spellings are made one at a time: a long value's
// are dropped once their anchors are taken.
func formsOf(v string) iter.Seq[form] {
	return func(yield func(form) bool) {
		t := strings.TrimSpace(v)
		if len(t) < minSecretLen {
			return
		}
		for _, x := range []string{v, t} {
			for _, spell := range spellings {
				if !spelled(spell(x), yield) {
					return
				}
			}
			if t == v {
				break
			}
		}
		if !strings.ContainsAny(v, "\r\n") {
			return
		}
		for line := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if !spelled(strings.TrimSpace(line), yield) {
				return
			}
		}
	}
}

var spellings = []func(string) string{
	func(x string) string { return x },
	func(x string) string { return base64.StdEncoding.EncodeToString([]byte(x)) },
	func(x string) string { q := strconv.Quote(x); return q[1 : len(q)-1] },
	func(x string) string {
		j, err := json.Marshal(x)
		if err != nil || len(j) < 2 {
			return ""
		}
		return string(j[1 : len(j)-1])
	},
}

// spelled yields the forms of one spelling: itself, or its anchors.
func spelled(s string, yield func(form) bool) bool {
	switch {
	case len(s) < minSecretLen:
		return true
	case len(s) <= maxWholeForm:
		return yield(form{text: s})
	}
	return yield(form{text: s[:anchorLen], span: len(s)}) && yield(form{text: s[len(s)-anchorLen:], span: -len(s)})
}

func formCost(f form) int { return len(f.text) + formOverhead }

// collector gathers the forms of one source's values by the namespace
// they live in, de-duplicated, up to the source's bounds. Past them it
// keeps no form and is over: the messages that could show the source's
// values are withheld (withheldMessage), never scrubbed of only some.
type collector struct {
	seen        map[nsForm]struct{}
	byNS        map[string][]form // every namespace given a value, also when over
	forms, cost int
	over        bool
}

type nsForm struct {
	ns string
	form
}

func newCollector() *collector {
	return &collector{seen: map[nsForm]struct{}{}, byNS: map[string][]form{}}
}

// value adds the forms of v, a value in namespace ns; false once over.
func (c *collector) value(ns, v string) bool {
	for f := range formsOf(v) {
		if !c.add(ns, f) {
			return false
		}
	}
	return !c.over
}

func (c *collector) add(ns string, f form) bool {
	if c.over {
		c.byNS[ns] = nil
		return false
	}
	if _, ok := c.seen[nsForm{ns, f}]; ok {
		return true
	}
	c.forms, c.cost = c.forms+1, c.cost+formCost(f)
	if c.forms > maxSourceForms || c.cost > maxSourceBytes {
		c.overflow()
		c.byNS[ns] = nil
		return false
	}
	// A form may be a slice of a file or of a long spelling: keep only
	// its own bytes.
	f.text = strings.Clone(f.text)
	c.seen[nsForm{ns, f}] = struct{}{}
	c.byNS[ns] = append(c.byNS[ns], f)
	return true
}

// overflow drops the forms: the source is over its bounds.
func (c *collector) overflow() {
	c.over, c.seen, c.forms, c.cost = true, nil, 0, 0
	for ns := range c.byNS {
		c.byNS[ns] = nil
	}
}
