/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// ref_test.go: the ref a pull request's head is fetched from.

package prplan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
)

func TestHeadRefNeedsExactlyOneStarInTheRefPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
	}{
		{"refs/heads/pr/*", "refs/heads/pr/7"},
		{"", "refs/pull/7/head"},
		{"refs/heads/main", ""},
		{"refs/*/pr/*", ""},
	} {
		gr := &v1alpha1.GitRepository{}
		gr.Spec.PullRequests = &v1alpha1.PullRequestsSpec{RefPattern: tc.pattern}
		ref, err := prplan.HeadRef(gr, 7)
		if tc.want == "" {
			require.Error(t, err, tc.pattern)
			assert.Contains(t, err.Error(), "want exactly one for the pull request's number")
			continue
		}
		require.NoError(t, err, tc.pattern)
		assert.Equal(t, tc.want, ref)
	}
}
