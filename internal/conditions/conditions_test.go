/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package conditions

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func cond(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
}

func TestTransitionTime(t *testing.T) {
	base := cond("Ready", metav1.ConditionFalse, "Progressing", "applying r1")
	for _, tc := range []struct {
		name    string
		next    metav1.Condition
		changed bool
	}{
		{"same state keeps the time", base, false},
		{"status changes it", cond("Ready", metav1.ConditionTrue, "Progressing", "applying r1"), true},
		{"reason changes it", cond("Ready", metav1.ConditionFalse, "Waiting", "applying r1"), true},
		{"message changes it", cond("Ready", metav1.ConditionFalse, "Progressing", "applying r2"), true},
		{"white space around the message does not", cond("Ready", metav1.ConditionFalse, "Progressing", " applying r1\n"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var conds []metav1.Condition
			if !Set(&conds, 1, t0, base) {
				t.Fatal("a new condition is a change")
			}
			later := t0.Add(90*time.Second + 300*time.Millisecond)
			if got := Set(&conds, 2, later, tc.next); got != tc.changed {
				t.Fatalf("changed = %v, want %v", got, tc.changed)
			}
			want := t0
			if tc.changed {
				want = later.Truncate(time.Second)
			}
			c := conds[0]
			if !c.LastTransitionTime.Time.Equal(want) || c.ObservedGeneration != 2 {
				t.Fatalf("got time %v generation %d, want %v and 2", c.LastTransitionTime, c.ObservedGeneration, want)
			}
		})
	}
}

func TestSortedByTypeWhateverTheOrderOfSetting(t *testing.T) {
	var a, b []metav1.Condition
	types := []string{"Stalled", "Ready", "Reconciling", "FetchFailed"}
	for i := range types {
		Set(&a, 1, t0, cond(types[i], metav1.ConditionTrue, "R", "m"))
		Set(&b, 1, t0, cond(types[len(types)-1-i], metav1.ConditionTrue, "R", "m"))
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("order depends on the order of Set:\n%v\n%v", a, b)
	}
	var got []string
	for _, c := range a {
		got = append(got, c.Type)
	}
	if strings.Join(got, ",") != "FetchFailed,Ready,Reconciling,Stalled" {
		t.Fatalf("order %v", got)
	}
}

// A stall's conditions, set again later (by a later reconcile, or by the
// state machine's summary on the same facts), leave the status identical:
// no status write.
func TestSettingTheSameConditionsAgainIsNoChange(t *testing.T) {
	stall := func(conds *[]metav1.Condition, now time.Time) bool {
		changed := false
		for _, typ := range []string{"Stalled", "Ready", "Reconciling"} {
			st := metav1.ConditionFalse
			if typ == "Stalled" {
				st = metav1.ConditionTrue
			}
			changed = Set(conds, 3, now, cond(typ, st, "InvalidSpec", "bad duration")) || changed
		}
		return changed
	}
	var conds []metav1.Condition
	stall(&conds, t0)
	before := append([]metav1.Condition(nil), conds...)
	if stall(&conds, t0.Add(time.Hour)) || !reflect.DeepEqual(before, conds) {
		t.Fatalf("second stall changed the conditions:\n%v\n%v", before, conds)
	}
}

func TestMessageTrimmed(t *testing.T) {
	var conds []metav1.Condition
	Set(&conds, 1, t0, cond("Ready", metav1.ConditionFalse, "R", "\n  failed: x \t"))
	if conds[0].Message != "failed: x" {
		t.Fatalf("message %q", conds[0].Message)
	}
	long := strings.Repeat("é", maxMessage) // two bytes each
	Set(&conds, 1, t0, cond("Ready", metav1.ConditionFalse, "R", long))
	if m := conds[0].Message; len(m) > maxMessage || !utf8.ValidString(m) || len(m) < maxMessage-1 {
		t.Fatalf("long message cut to %d bytes, valid UTF-8: %v", len(m), utf8.ValidString(m))
	}
}

func TestRemoveDoesNotWriteThroughASharedArray(t *testing.T) {
	var conds []metav1.Condition
	Set(&conds, 1, t0, cond("A", metav1.ConditionTrue, "R", "m"))
	Set(&conds, 1, t0, cond("B", metav1.ConditionTrue, "R", "m"))
	shared := conds
	Remove(&conds, "A")
	if len(conds) != 1 || conds[0].Type != "B" || shared[0].Type != "A" || Get(conds, "A") != nil {
		t.Fatalf("after Remove: %v, shared %v", conds, shared)
	}
	Remove(&conds, "missing")
	if len(conds) != 1 || !IsTrue(conds, "B") || IsTrue(conds, "A") {
		t.Fatalf("after removing a missing type: %v", conds)
	}
}
