/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	long := strings.Repeat("é", 300)
	tests := []struct {
		provider string
		in       string
		runes    int
	}{
		{ProviderGitHub, "short", 5},
		{ProviderGitHub, strings.Repeat("x", 140), 140},
		{ProviderGitHub, strings.Repeat("x", 141), 140},
		{ProviderGitHub, long, 140},
		{ProviderGitLab, long, 255},
		{ProviderGitea, long, 300},
		{ProviderGitea, strings.Repeat("y", 1001), 1000},
		{"unknown", long, 140},
	}
	for _, tt := range tests {
		got := Truncate(tt.in, tt.provider)
		if n := utf8.RuneCountInString(got); n != tt.runes {
			t.Errorf("Truncate(%d runes, %s) has %d runes, want %d", utf8.RuneCountInString(tt.in), tt.provider, n, tt.runes)
		}
		if n := utf8.RuneCountInString(tt.in); n > tt.runes && !strings.HasSuffix(got, "…") {
			t.Errorf("truncated text should end with an ellipsis: %q", got)
		}
		if again := Truncate(got, tt.provider); again != got {
			t.Errorf("Truncate is not idempotent for %s", tt.provider)
		}
	}
}

func TestTruncateInvalidUTF8MatchesJSON(t *testing.T) {
	got := Truncate("bad \xff byte", ProviderGitHub)
	if got != "bad \uFFFD byte" {
		t.Fatalf("got %q", got)
	}
}
