/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func FuzzParseFlinkDuration(f *testing.F) {
	for _, s := range []string{"10 min", "30 s", "15s", "500 ms", "1 h", "2d", "1200", "1m30s", "", "-1", "9999999999999999999", "1 µs", " 3 DAYS "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseFlinkDuration(s)
		if err == nil && d < 0 {
			t.Fatalf("%q parsed to negative %v", s, d)
		}
	})
}

func FuzzWindowState(f *testing.F) {
	f.Add("0 2 * * *", int64(2*time.Hour), "Europe/Berlin", int64(1784541600))
	f.Add("*/15 * * * 1-5", int64(time.Minute), "UTC", int64(0))
	f.Add("@daily", int64(time.Hour), "", int64(-62135596800))
	f.Add("0 2 30 2 *", int64(time.Hour), "America/New_York", int64(1784541600))
	f.Add("TZ=x 0", int64(-1), "Local", int64(253402300799))
	f.Fuzz(func(t *testing.T, schedule string, dur int64, zone string, unix int64) {
		now := time.Unix(unix, 0)
		ws := []v1alpha1.RolloutWindow{{Schedule: schedule, Duration: metav1.Duration{Duration: time.Duration(dur)}, TimeZone: zone}}
		w, err := WindowState(ws, now)
		if err != nil {
			return
		}
		if !w.Open && !w.OpensAt.After(now) {
			t.Fatalf("closed window opens at %v, not after %v", w.OpensAt, now)
		}
	})
}
