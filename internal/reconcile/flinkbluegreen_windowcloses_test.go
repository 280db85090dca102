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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestACommitAfterTheWindowClosedNeitherReplacesNorRespecsTheGreenUnderWay:
// r2 (a new image) starts a transition while the source's rollout window
// is open; the window closes while green comes up; r3 (another image)
// lands. Green is neither deleted nor re-specced for r3 at any point, r2's
// transition ends ACTIVE_GREEN with r2's spec, and r3 waits for the window:
// no colour with r3's image exists while it is closed.
func TestACommitAfterTheWindowClosedNeitherReplacesNorRespecsTheGreenUnderWay(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	// Green must still be coming up when r3 is handled: closing the window
	// and fetching, rendering and applying r3 take about a second here,
	// well within this start delay; if not, the test fails rather than
	// passing without a transition under way.
	const slow = `, "bggitops.dev/simulate-start-delay": "10s"`
	rev1 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"),
		"job.yaml":           fbgdManifest("flink:1.20.0", ""),
	})
	f.create("s3cr3t-pass") // no rolloutWindows: always open
	f.waitApplied(rev1)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))

	rev2 := f.push(map[string]string{"job.yaml": fbgdManifest("flink:1.20.1", slow)})
	f.requestReconcile()
	f.waitApplied(rev2)
	var green *unstructured.Unstructured
	eventually(t, ns, "green created for r2", func() bool {
		g, ok := child(ns, "job-green")
		green = g
		return ok && g.GetAnnotations()[v1alpha1.RevisionAnnotation] == rev2
	})
	greenUID := green.GetUID()
	require.Equal(t, "flink:1.20.1", nested(green, "spec", "image"))

	// Closed but for an hour on 29 February.
	closed := []v1alpha1.RolloutWindow{{Schedule: "0 3 29 2 *", Duration: metav1.Duration{Duration: time.Hour}}}
	f.waitObserved(f.patchSpec(func(gr *v1alpha1.GitRepository) { gr.Spec.RolloutWindows = closed }))

	rev3 := f.push(map[string]string{"job.yaml": fbgdManifest("flink:1.20.2", slow)})
	f.requestReconcile()
	f.waitApplied(rev3)

	// greenKept fails the test as soon as green is found deleted, replaced
	// or re-specced; no colour with r3's image may exist while closed.
	greenKept := func() {
		t.Helper()
		g, ok := child(ns, "job-green")
		require.True(t, ok, "green was deleted for a commit that landed after the window closed")
		require.Equal(t, greenUID, g.GetUID(), "green was replaced for a commit that landed after the window closed")
		require.Equal(t, "flink:1.20.1", nested(g, "spec", "image"), "green was re-specced with r3's image")
		require.Equal(t, rev2, g.GetAnnotations()[v1alpha1.RevisionAnnotation], "green was re-specced with r3")
		noColourOf(t, ns, "flink:1.20.2")
	}

	r3Gen := getFBGD(t, ns, "job").Generation
	eventually(t, ns, "r3 observed", func() bool {
		greenKept()
		p := getFBGD(t, ns, "job")
		if p.Status.ObservedGeneration < r3Gen {
			return false
		}
		require.Falsef(t, p.Status.BlueGreenState.Active(),
			"r3 was handled after r2's transition ended (%s): raise the start delay for this machine", p.Status.BlueGreenState)
		return true
	})
	eventually(t, ns, "r2's transition ends ACTIVE_GREEN", func() bool {
		greenKept()
		return state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning)()
	})
	eventually(t, ns, "r3 waits for the window", func() bool {
		greenKept()
		p := getFBGD(t, ns, "job")
		c := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ReconcilingCondition)
		return p.Status.ObservedGeneration == p.Generation && c != nil && c.Reason == "WaitingForRolloutWindow"
	})
	eventually(t, ns, "blue deleted", func() bool {
		greenKept()
		_, ok := child(ns, "job-blue")
		return !ok
	})

	greenKept()
	p := getFBGD(t, ns, "job")
	assert.Equal(t, v1alpha1.ActiveGreen, p.Status.BlueGreenState)
	assert.Equal(t, rev2, p.Status.ActiveRevision)
	assert.Equal(t, "job-green", p.Status.ActiveDeployment)
	c := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ReconcilingCondition)
	require.NotNil(t, c)
	assert.Equal(t, "WaitingForRolloutWindow", c.Reason)
}

// noColourOf fails the test if any FlinkDeployment in ns runs image.
func noColourOf(t testing.TB, ns, image string) {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
	for i := range list.Items {
		c := &list.Items[i]
		require.NotEqualf(t, image, nested(c, "spec", "image"), "%s runs %s, committed after the window closed", c.GetName(), image)
	}
}
