/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// scaleChild scales a FlinkDeployment through its scale subresource
// (spec.taskManager.replicas), as an HPA or `kubectl scale` does.
func scaleChild(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	u, ok := child(ns, name)
	require.True(t, ok, "%s exists", name)
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	require.NoError(t, env.Client.SubResource("scale").Update(context.Background(), u, client.WithSubResourceBody(scale)))
}

// An HPA scales blue; then a commit changes only parallelism.default,
// which FLIP-503 patches in place. Blue is patched in place (no savepoint,
// no green: the classification compares what Git set, not the replicas
// another field manager set), and keeps the HPA's replicas, which the
// template does not set.
func TestScaledActiveChildIsPatchedInPlace(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")
	scaleChild(t, ns, "job-blue", 5)

	update(t, ns, "job", 2, "flink:1.20.0", `, "parallelism.default": "4"`)
	eventually(t, ns, "the rollout of revision 2 to succeed", func() bool {
		h := getFBGD(t, ns, "job").Status.History
		last := h[len(h)-1]
		return last.Revision == revision(2) && last.Outcome == v1alpha1.RolloutSucceeded
	})
	h := getFBGD(t, ns, "job").Status.History
	assert.Equal(t, v1alpha1.RolloutInPlace, h[len(h)-1].Kind, "an in-place rollout")
	_, green := child(ns, "job-green")
	assert.False(t, green, "no green was started")
	blue, _ := child(ns, "job-blue")
	assert.Equal(t, "4", nested(blue, "spec", "flinkConfiguration", "parallelism.default"), "blue carries the change")
	replicas, _, _ := unstructured.NestedInt64(blue.Object, "spec", "taskManager", "replicas")
	assert.EqualValues(t, 5, replicas, "the HPA's replicas stay")
	assert.NotEqual(t, blueJob, "", "blue ran a job")
}
