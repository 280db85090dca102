/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDurationGettersClamp: objects stored before the CRD bounded interval
// and timeout get the bounds from the getters.
func TestDurationGettersClamp(t *testing.T) {
	d := func(v time.Duration) *metav1.Duration { return &metav1.Duration{Duration: v} }
	for _, tc := range []struct {
		name              string
		interval, timeout *metav1.Duration
		wantI, wantT      time.Duration
	}{
		{"defaults", nil, nil, DefaultInterval, DefaultTimeout},
		{"in bounds", d(time.Hour), d(2 * time.Minute), time.Hour, 2 * time.Minute},
		{"too small", d(time.Millisecond), d(time.Millisecond), MinInterval, MinTimeout},
		{"timeout too large", nil, d(time.Hour), DefaultInterval, MaxTimeout},
	} {
		gr := &GitRepository{Spec: GitRepositorySpec{Interval: tc.interval, Timeout: tc.timeout}}
		if got := gr.GetInterval(); got != tc.wantI {
			t.Errorf("%s: interval %s, want %s", tc.name, got, tc.wantI)
		}
		if got := gr.GetTimeout(); got != tc.wantT {
			t.Errorf("%s: timeout %s, want %s", tc.name, got, tc.wantT)
		}
	}
}
