/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// match.go: Scrubber and its matcher, which find the forms of known values in
// a message in one pass and redact them.

package redact

import (
	"cmp"
	"slices"
	"strings"
)

// maxScrubWork bounds the work of one scrub, in bytes compared (tens of
// milliseconds): forms that share their first bytes with much of a
// message ("aaaa…" against "aaaa…") would make it quadratic. A message
// that needs more is withheld.
const maxScrubWork = 1 << 28

// matcherOverhead is what a matcher costs beside its forms: its bloom
// filter and headers.
const matcherOverhead = 1 << 10

// matcher finds the forms of one source's values in a message in one pass.
// It is built once when the values change and then only read, by every
// scrub at once.
type matcher struct {
	forms []form           // by key
	start map[uint32]int32 // key → its first form
	bloom [64]uint64       // keys present, hashed to 4096 bits
}

// key is what forms are looked up by: their first minSecretLen bytes.
func key(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func bloomBit(k uint32) uint32 { return (k * 0x9E3779B1) >> 20 }

func newMatcher(forms []form) *matcher {
	if len(forms) == 0 {
		return nil
	}
	forms = slices.DeleteFunc(slices.Clone(forms), func(f form) bool { return len(f.text) < minSecretLen })
	m := &matcher{forms: forms, start: make(map[uint32]int32)}
	slices.SortFunc(m.forms, func(a, b form) int { return cmp.Compare(key(a.text), key(b.text)) })
	for i := len(m.forms) - 1; i >= 0; i-- {
		k := key(m.forms[i].text)
		m.start[k] = int32(i)
		m.bloom[bloomBit(k)/64] |= 1 << (bloomBit(k) % 64)
	}
	return m
}

// span is msg[start:end], to redact.
type span struct{ start, end int }

// find appends the spans of the forms found in msg and adds to *work
// what it cost; it stops when *work is over maxScrubWork.
func (m *matcher) find(msg string, spans []span, work *int) []span {
	for i := 0; i+minSecretLen <= len(msg) && *work <= maxScrubWork; i++ {
		k := key(msg[i:])
		if m.bloom[bloomBit(k)/64]&(1<<(bloomBit(k)%64)) == 0 {
			continue
		}
		first, ok := m.start[k]
		if !ok {
			continue
		}
		for _, f := range m.forms[first:] {
			if key(f.text) != k {
				break
			}
			*work += 16 + min(len(f.text), len(msg)-i)
			if sp, ok := f.at(msg, i); ok {
				spans = append(spans, sp)
			}
		}
	}
	return spans
}

// at is the span f redacts if its text, at msg[i:], stands on its own: a
// whole spelling where it is delimited (see Scrubber.string), an anchor
// where its outer end is, and then what its spelling would cover.
func (f form) at(msg string, i int) (span, bool) {
	end := i + len(f.text)
	if !strings.HasPrefix(msg[i:], f.text) {
		return span{}, false
	}
	switch {
	case f.span > 0:
		return span{i, min(len(msg), i+f.span)}, delimited(msg, i, len(msg), f.text)
	case f.span < 0:
		return span{max(0, end+f.span), end}, delimited(msg, 0, end, f.text)
	}
	return span{i, end}, delimited(msg, i, end, f.text)
}

// Scrubber replaces known secret values in messages; withheld, it replaces
// every message (see withheldMessage).
type Scrubber struct {
	matchers []*matcher
	withheld bool
}

// ForValue is the scrubber of one value, in every spelling (a forge token
// while it is sent).
func ForValue(v string) Scrubber { return newScrubber(valueForms(v)) }

func newScrubber(forms []form) Scrubber {
	if m := newMatcher(forms); m != nil {
		return Scrubber{matchers: []*matcher{m}}
	}
	return Scrubber{}
}

// and is a Scrubber of the values of both.
func (s Scrubber) And(other Scrubber) Scrubber {
	return Scrubber{matchers: append(slices.Clip(s.matchers), other.matchers...), withheld: s.withheld || other.withheld}
}

// string replaces every occurrence of a form that is not part of a longer
// word: a value that begins (ends) with a letter or digit is replaced
// where it is not preceded (followed) by one, so that the password "test"
// leaves "latest" alone while "test", "user:test@" and `"test"` lose it.
// Where an error glues a value to letters or digits it is no longer that
// value's spelling: kustomize, the API server and forges quote or
// delimit what they echo. Occurrences that overlap are replaced as one.
func (s Scrubber) Scrub(msg string) string {
	if s.withheld {
		return withheldMessage
	}
	var spans []span
	work := 0
	for _, m := range s.matchers {
		spans = m.find(msg, spans, &work)
	}
	if work > maxScrubWork {
		return withheldMessage
	}
	return redact(msg, spans)
}

// redact replaces the spans of msg, merged where they overlap or touch.
func redact(msg string, spans []span) string {
	if len(spans) == 0 {
		return msg
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var b strings.Builder
	done := 0 // msg[:done] is in b
	for i := 0; i < len(spans); {
		start, end := spans[i].start, spans[i].end
		for i++; i < len(spans) && spans[i].start <= end; i++ {
			end = max(end, spans[i].end)
		}
		b.WriteString(msg[done:start])
		b.WriteString(Redacted)
		done = end
	}
	b.WriteString(msg[done:])
	return b.String()
}

func delimited(msg string, before, after int, form string) bool {
	if before > 0 && alnum(form[0]) && alnum(msg[before-1]) {
		return false
	}
	if after < len(msg) && alnum(form[len(form)-1]) && alnum(msg[after]) {
		return false
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// error is err with a scrubbed message; errors.Is and errors.As still see
// err (classification is by type, never by text).
func (s Scrubber) ScrubError(err error) error {
	if err == nil || len(s.matchers) == 0 && !s.withheld {
		return err
	}
	msg := err.Error()
	if clean := s.Scrub(msg); clean != msg {
		return &scrubbedError{msg: clean, err: err}
	}
	return err
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
