/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests that the action `bg-gitops diff` announces is what the controller's
// decision (bluegreen.Decide) does.

package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/review/reviewtest"
)

// TestDiffAgreesWithDecide: for every pull-request case, the action diff
// announces is what the controller's decision does (bluegreen.Decide, no
// API server; TestControllerTakesTheAnnouncedAction runs the same cases
// end to end).
func TestDiffAgreesWithDecide(t *testing.T) {
	for _, c := range prCases {
		if c.action == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			r := newPRRepo(t)
			c.change(r)
			r.commit(c.name)
			announced, err := reviewtest.Check(renderedFBGD(t, r, "main"), renderedFBGD(t, r, "pr"))
			require.NoError(t, err)
			assert.Equal(t, c.action, announced)
		})
	}
}

func renderedFBGD(t *testing.T, r *prRepo, ref string) *unstructured.Unstructured {
	t.Helper()
	objs, _, err := render.BuildRef(r.dir, ref, prPath, render.Options{})
	require.NoError(t, err)
	for _, u := range objs {
		if u.GetKind() == v1alpha1.FlinkBlueGreenDeploymentKind {
			return u
		}
	}
	t.Fatalf("no FlinkBlueGreenDeployment rendered at %s", ref)
	return nil
}
