/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of what the verbs refuse before they make a request.

package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestPromoteDuringAnInPlaceChangeHasNothingToPromote: while an in-place
// change runs (TRANSITIONING_TO_BLUE with job-blue active, promotion mode
// Manual) there is nothing to promote (an in-place change needs none); the
// controller would acknowledge the request as ignored once the patch is
// done, and `promote --wait` would exit 0. The precheck refuses it (exit 3)
// like any promote with nothing to act on; a blue/green transition in
// Manual mode is accepted.
func TestPromoteDuringAnInPlaceChangeHasNothingToPromote(t *testing.T) {
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
	p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	p.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.TransitioningToBlue, ActiveDeployment: "job-blue",
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobReconciling}}
	err := fbgdCanAct("promote")(p, true)
	require.Error(t, err)
	assert.Equal(t, exitNothingToDo, exitCode(err))

	p.Status.BlueGreenState = v1alpha1.TransitioningToGreen
	assert.NoError(t, fbgdCanAct("promote")(p, true), "a blue/green transition waits for a promotion")
}
