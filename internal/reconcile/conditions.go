/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// conditions.go: setting, clearing and finding status conditions.

package reconcile

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/internal/conditions"
)

// setCondition sets a condition by the rule of internal/conditions
// (lastTransitionTime kept unless status, reason or message change, sorted,
// so an idle controller writes nothing) and reports whether it changed.
func setCondition(conds *[]metav1.Condition, gen int64, now time.Time, typ string, status metav1.ConditionStatus, reason, msg string) bool {
	return conditions.Set(conds, gen, now, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
}

// clearCondition removes a negative-polarity condition that no longer holds.
func clearCondition(conds *[]metav1.Condition, typ string) {
	conditions.Remove(conds, typ)
}

func conditionTrue(conds []metav1.Condition, typ string) bool {
	return conditions.IsTrue(conds, typ)
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	return conditions.Get(conds, typ)
}
