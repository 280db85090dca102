/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	reset := strconv.FormatInt(now.Add(90*time.Second).Unix(), 10)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name   string
		code   int
		h      http.Header
		target error
		wait   time.Duration // >0: want *RateLimitedError with this RetryAfter
	}{
		{"401", 401, hdr(), ErrUnauthorized, 0},
		{"403 no scope", 403, hdr("X-RateLimit-Remaining", "42"), ErrUnauthorized, 0},
		{"404", 404, hdr(), ErrNotFound, 0},
		{"429 retry-after seconds", 429, hdr("Retry-After", "7"), nil, 7 * time.Second},
		{"429 retry-after date", 429, hdr("Retry-After", now.Add(30*time.Second).UTC().Format(http.TimeFormat)), nil, 30 * time.Second},
		{"403 github primary", 403, hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset), nil, 90 * time.Second},
		{"403 github secondary", 403, hdr("Retry-After", "60"), nil, time.Minute},
		{"429 gitlab", 429, hdr("RateLimit-Remaining", "0", "RateLimit-Reset", reset), nil, 90 * time.Second},
		{"429 no hint", 429, hdr(), nil, defaultRetryAfter},
		{"429 reset in the past", 429, hdr("RateLimit-Reset", "1"), nil, time.Second},
	}
	for _, tt := range tests {
		err := classify(tt.code, tt.h, "msg", "", now)
		var rl *RateLimitedError
		switch {
		case tt.wait > 0:
			if !errors.As(err, &rl) || rl.RetryAfter != tt.wait {
				t.Errorf("%s: got %v, want rate limited for %s", tt.name, err, tt.wait)
			}
		case !errors.Is(err, tt.target) || errors.As(err, &rl):
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.target)
		}
	}
	for _, code := range []int{400, 422, 500, 502, 503} {
		err := classify(code, hdr(), "x", "", now)
		var rl *RateLimitedError
		if errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrNotFound) || errors.As(err, &rl) {
			t.Errorf("%d should be a plain (transient) error, got %v", code, err)
		}
	}
}

func TestContexts(t *testing.T) {
	if got := SyncContext("prod", "jobs"); got != "bg-gitops/sync/prod/jobs" {
		t.Error(got)
	}
	if got := RolloutContext("prod", "wordcount"); got != "bg-gitops/rollout/prod/wordcount" {
		t.Error(got)
	}
}
