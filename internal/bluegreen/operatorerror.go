/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// operatorerror.go: operatorError, a child's Flink operator status.error
// shortened to one line for conditions and events.

package bluegreen

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// operatorErrorLimit bounds the Flink operator's status.error where a
// condition, an event or the parent's status.error quotes it: the
// operator writes whole exception chains there.
const operatorErrorLimit = 200

// operatorError is a child's status.error as a short line. The Flink
// operator writes the JSON of a FlinkResourceException ({"type": the
// exception class, "message": ..., "throwableList": [...]}); the class's
// simple name and the message are kept. Anything else is quoted as it is.
// Whitespace collapses to single spaces; a longer text ends in "…".
func operatorError(raw string) string {
	msg := raw
	var e struct{ Type, Message string }
	if json.Unmarshal([]byte(raw), &e) == nil && e.Message != "" {
		msg = e.Message
		if e.Type != "" {
			msg = e.Type[strings.LastIndex(e.Type, ".")+1:] + ": " + msg
		}
	}
	return shorten(strings.Join(strings.Fields(msg), " "), operatorErrorLimit)
}

// shorten cuts s to at most limit runes, the last one "…" when cut.
func shorten(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit-1]) + "…"
}
