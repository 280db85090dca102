/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestNextPoll(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 7, 30, 0, time.UTC)
	gr := func(interval time.Duration, schedule string) *v1alpha1.GitRepository {
		g := &v1alpha1.GitRepository{Spec: v1alpha1.GitRepositorySpec{Schedule: schedule}}
		if interval > 0 {
			g.Spec.Interval = &metav1.Duration{Duration: interval}
		}
		return g
	}
	t.Run("interval jitter", func(t *testing.T) {
		seen := map[time.Duration]bool{}
		for range 200 {
			d, err := NextPoll(gr(10*time.Minute, ""), now)
			require.NoError(t, err)
			assert.InDelta(t, float64(10*time.Minute), float64(d), float64(30*time.Second))
			seen[d] = true
		}
		assert.Greater(t, len(seen), 100, "jitter spreads polls")
	})
	t.Run("default interval", func(t *testing.T) {
		d, err := NextPoll(gr(0, ""), now)
		require.NoError(t, err)
		assert.InDelta(t, float64(time.Minute), float64(d), float64(3*time.Second))
	})
	for _, tc := range []struct {
		schedule string
		want     time.Duration
	}{
		{"*/15 * * * *", 7*time.Minute + 30*time.Second},
		{"0 12 * * *", time.Hour + 52*time.Minute + 30*time.Second},
		{"CRON_TZ=Europe/Berlin 0 12 * * *", 52*time.Minute + 30*time.Second}, // 12:00 CET is 11:00 UTC
		{"@hourly", 52*time.Minute + 30*time.Second},
	} {
		d, err := NextPoll(gr(0, tc.schedule), now)
		require.NoError(t, err, tc.schedule)
		assert.Equal(t, tc.want, d, tc.schedule)
	}
	for _, bad := range []string{"* * *", "61 * * * *", "CRON_TZ=Mars/Olympus 0 * * * *", "every minute"} {
		_, err := NextPoll(gr(0, bad), now)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "is not a valid cron expression")
	}
}

// TestPollBounds: objects stored before the CRD bounded interval and
// @every schedules (or written around it) still poll at most every
// v1alpha1.MinInterval.
func TestPollBounds(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 7, 30, 0, time.UTC)
	g := &v1alpha1.GitRepository{Spec: v1alpha1.GitRepositorySpec{Interval: &metav1.Duration{Duration: time.Millisecond}}}
	d, err := NextPoll(g, now)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, d, time.Duration(float64(v1alpha1.MinInterval)*(1-Jitter)))

	for _, s := range []string{"@every 1ms", "@every 9s", "CRON_TZ=UTC @every 1s"} {
		_, err := NextPoll(&v1alpha1.GitRepository{Spec: v1alpha1.GitRepositorySpec{Schedule: s}}, now)
		require.Error(t, err, s)
		assert.Contains(t, err.Error(), "polls more often than every 10s")
	}
	d, err = NextPoll(&v1alpha1.GitRepository{Spec: v1alpha1.GitRepositorySpec{Schedule: "@every 10s"}}, now)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, d)
}
