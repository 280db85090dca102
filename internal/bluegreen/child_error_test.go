/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// refusedSpec is a status.error as the Flink operator writes it when it
// refuses a spec (the JSON of a FlinkResourceException).
const refusedSpec = `{"type":"org.apache.flink.kubernetes.operator.exception.ValidationException",` +
	`"message":"Forbidden Flink config key: kubernetes.namespace","additionalMetadata":{},"throwableList":[]}`

// refuse makes the Flink operator refuse c's current spec: status.error
// set, the spec's generation never observed.
func (w *world) refuse(c Color, msg string) {
	ch := w.mustChild(c)
	ch.Generation, ch.ObservedGeneration = 2, 1
	ch.LifecycleState, ch.JobState, ch.Error = "FAILED", "", msg
}

// TestChildErrorIsNamedInTheParent: a child whose spec the Flink operator
// refused is reported with the operator's status.error, shortened, in
// the parent's conditions while the parent waits, and in status.error
// when the wait ends; not as a spec "not yet observed".
func TestChildErrorIsNamedInTheParent(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.step()
	w.refuse(Blue, refusedSpec)
	w.advance(time.Minute)
	w.step()
	want := "Flink operator error: ValidationException: Forbidden Flink config key: kubernetes.namespace"
	w.expectCondition(v1alpha1.ReconcilingCondition, metav1.ConditionTrue, ReasonProgressing, want)
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonProgressing, want)

	w.advance(10 * time.Minute)
	w.step()
	w.expectState(sInit, jFailing)
	w.expectError(want)
	if strings.Contains(w.status().Error, "not yet observed") {
		w.fatalf("error %q says the spec was not observed; the operator refused it", w.status().Error)
	}
}

// TestActiveChildErrorIsNamedInReady: an active job that failed is not
// ready, and Ready says what the Flink operator reports.
func TestActiveChildErrorIsNamedInReady(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.step()
	w.ready(Blue)
	w.step()
	w.failChild(Blue)
	w.mustChild(Blue).Error = "simulated job failure"
	w.step()
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonJobNotReady,
		"active FlinkDeployment orders-blue is not ready (lifecycle FAILED, job FAILED, Flink operator error: simulated job failure)")
}

// TestOperatorErrorIsShort: a long or multi-line status.error is quoted
// on one line, cut at operatorErrorLimit characters.
func TestOperatorErrorIsShort(t *testing.T) {
	for name, tc := range map[string]struct{ raw, want string }{
		"exception JSON": {refusedSpec, "ValidationException: Forbidden Flink config key: kubernetes.namespace"},
		"plain text":     {"simulated job failure", "simulated job failure"},
		"no message":     {`{"type":"x.Y"}`, `{"type":"x.Y"}`},
		"lines":          {"a\n\tb  c", "a b c"},
	} {
		if got := operatorError(tc.raw); got != tc.want {
			t.Errorf("%s: operatorError = %q, want %q", name, got, tc.want)
		}
	}
	long := `{"type":"org.apache.flink.FlinkException","message":"` + strings.Repeat("é", 500) + `"}`
	got := operatorError(long)
	if n := utf8.RuneCountInString(got); n != operatorErrorLimit || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("operatorError of a long error = %d runes %q, want %d ending in …", n, got, operatorErrorLimit)
	}
}
