/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of how --for-revision resolves to a commit.

package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveRevision(t *testing.T) {
	r := gitRepo(t, "one")
	head := r.git("rev-parse", "HEAD")
	for _, arg := range []string{"HEAD", "main", head, head[:7], rev(head)} {
		c, err := resolveRevision(arg, r.dir)
		require.NoError(t, err, arg)
		assert.True(t, c.in(rev(head)), arg)
	}
	_, err := resolveRevision("nope", r.dir)
	assert.ErrorContains(t, err, "--for-revision nope")
	_, err = resolveRevision("", r.dir)
	assert.ErrorContains(t, err, "--for-revision is required")
	assert.False(t, commitRef(shaA).in(rev(shaB)))
}
