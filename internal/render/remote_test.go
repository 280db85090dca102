/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllowRemoteBases uses a file:// Git URL, which kustomize clones with
// the git CLI like any remote base, so the opt-in path runs without network.
func TestAllowRemoteBases(t *testing.T) {
	remote := newGitRepo(t)
	require.NoError(t, remote.write("base/kustomization.yaml", kustomization("cm.yaml")))
	require.NoError(t, remote.write("base/cm.yaml", configMap))
	remote.commit("remote base")

	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": kustomization("file://" + remote.dir + "//base?ref=main"),
	})
	_, err := Build(root, "app", Options{})
	require.ErrorIs(t, err, ErrRemoteRefused)

	objs, err := Build(root, "app", Options{AllowRemoteBases: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"ConfigMap"}, kinds(objs))
}
