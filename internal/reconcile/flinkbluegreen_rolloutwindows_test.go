/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestRolloutWindowsHoldTransitions: a transition waits, visibly, for the
// source GitRepository's rollout window, and starts as soon as the
// windows change to include now.
func TestRolloutWindowsHoldTransitions(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"),
		"job.yaml":           fbgdManifest("flink:1.20.0", ""),
	})
	closed := []v1alpha1.RolloutWindow{{Schedule: "0 3 29 2 *", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Europe/Berlin"}}
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.RolloutWindows = closed })
	f.waitApplied(rev1)
	eventually(t, ns, "first deployment is not held", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))

	rev2 := f.push(map[string]string{"job.yaml": fbgdManifest("flink:1.20.1", "")})
	f.requestReconcile()
	f.waitApplied(rev2)
	eventually(t, ns, "waiting for the window", func() bool {
		c := apimeta.FindStatusCondition(getFBGD(t, ns, "job").Status.Conditions, v1alpha1.ReconcilingCondition)
		return c != nil && c.Reason == "WaitingForRolloutWindow"
	})
	p := getFBGD(t, ns, "job")
	assert.Equal(t, v1alpha1.ActiveBlue, p.Status.BlueGreenState)
	assert.Contains(t, apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ReconcilingCondition).Message, "Europe/Berlin")
	_, green := child(ns, "job-green")
	assert.False(t, green, "no transition outside the window")

	gr := f.get()
	patch := client.MergeFrom(gr.DeepCopy())
	gr.Spec.RolloutWindows = []v1alpha1.RolloutWindow{{Schedule: "* * * * *", Duration: metav1.Duration{Duration: time.Minute}}}
	require.NoError(t, env.Client.Patch(context.Background(), gr, patch))
	eventually(t, ns, "ACTIVE_GREEN once the window is open", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	assert.Equal(t, rev2, getFBGD(t, ns, "job").Status.ActiveRevision)
}
