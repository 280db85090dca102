/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReceiverExternalURL(t *testing.T) {
	for _, tc := range []struct {
		external string
		valid    bool
		url      string
	}{
		{"", true, ""},
		{"https://bg-gitops.example.com", true, "https://bg-gitops.example.com/hook/abc"},
		{"https://bg-gitops.example.com/", true, "https://bg-gitops.example.com/hook/abc"},
		{"https://example.com/bg-gitops/", true, "https://example.com/bg-gitops/hook/abc"},
		{"http://127.0.0.1:9292", true, "http://127.0.0.1:9292/hook/abc"},
		{"bg-gitops.example.com", false, ""},
		{"ftp://bg-gitops.example.com", false, ""},
		{"https://bg-gitops.example.com/?x=1", false, ""},
		{"https://bg-gitops.example.com/#x", false, ""},
		{"https://user:pw@bg-gitops.example.com", false, ""},
		{"https:///path", false, ""},
	} {
		err := checkExternalURL(tc.external)
		if !tc.valid {
			assert.ErrorContains(t, err, "--receiver-external-url", tc.external)
			continue
		}
		assert.NoError(t, err, tc.external)
		assert.Equal(t, tc.url, webhookURL(tc.external, "/hook/abc"), tc.external)
	}
}
