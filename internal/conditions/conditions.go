/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package conditions owns the one rule by which bg-gitops sets status
// conditions, the rule of fluxcd/pkg/runtime/conditions: a condition's
// lastTransitionTime is kept unless its status, reason or message changes,
// its observedGeneration is always stamped, its message is trimmed, and the
// list is sorted by type. Setting the same condition twice therefore
// leaves the status identical, so an idle controller writes nothing.
//
// It depends on meta/v1 only, so that the pure state machine
// (internal/bluegreen) and the reconcilers share it.
package conditions

import (
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxMessage is the longest message the API server accepts
// (metav1.Condition's maxLength).
const maxMessage = 32768

// Set puts c into *conds, stamped with generation, and reports whether
// its state (status, reason or message) changed. The transition time is
// now, truncated to the second the API server keeps, when the state
// changed, and the stored one otherwise; c.LastTransitionTime is ignored.
func Set(conds *[]metav1.Condition, generation int64, now time.Time, c metav1.Condition) bool {
	c.ObservedGeneration = generation
	c.Message = trim(c.Message)
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	old := Get(*conds, c.Type)
	if old == nil {
		*conds = append(*conds, c)
		sortByType(*conds)
		return true
	}
	changed := !sameState(*old, c)
	if !changed {
		c.LastTransitionTime = old.LastTransitionTime
	}
	*old = c
	sortByType(*conds)
	return changed
}

// Remove deletes the condition of type typ; the order of the rest is kept.
// It writes a new slice, never the array *conds shares with another status.
func Remove(conds *[]metav1.Condition, typ string) {
	if Get(*conds, typ) == nil {
		return
	}
	kept := make([]metav1.Condition, 0, len(*conds)-1)
	for _, c := range *conds {
		if c.Type != typ {
			kept = append(kept, c)
		}
	}
	*conds = kept
}

// Get returns the condition of type typ, or nil.
func Get(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// IsTrue reports whether the condition of type typ is present and True.
func IsTrue(conds []metav1.Condition, typ string) bool {
	c := Get(conds, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

func sameState(a, b metav1.Condition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

func sortByType(conds []metav1.Condition) {
	sort.SliceStable(conds, func(i, j int) bool { return conds[i].Type < conds[j].Type })
}

// trim drops surrounding white space and cuts the message, on a rune
// boundary, to the length the API server accepts.
func trim(msg string) string {
	msg = strings.TrimSpace(msg)
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}
