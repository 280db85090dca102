/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package install

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/render"
)

// TestConfigReceiverSplitsOffTheReceiver: config/receiver is config/default
// with the webhook receiver in a Deployment of its own, running the
// controller's image with --receiver-only; the controller serves no
// webhook, and the receiver's Service sends webhooks to the receiver's
// pods only.
func TestConfigReceiverSplitsOffTheReceiver(t *testing.T) {
	objs, err := render.Build(root, "config/receiver", render.Options{})
	require.NoError(t, err)
	var rendered []*unstructured.Unstructured
	for _, u := range objs {
		rendered = append(rendered, normalize(t, u.Object))
	}
	ctrl := controller(t, rendered)
	assert.Contains(t, ctrl["args"], "--receiver-bind-address=0")
	assert.NotContains(t, ctrl["args"], "--receiver-bind-address=:9292")

	recv := find(t, rendered, "Deployment", "bg-gitops-receiver")
	containers, _, err := unstructured.NestedSlice(recv.Object, "spec", "template", "spec", "containers")
	require.NoError(t, err)
	require.Len(t, containers, 1)
	c := containers[0].(map[string]any)
	assert.Equal(t, ctrl["image"], c["image"], "the controller's image")
	assert.Equal(t, "controller", c["args"].([]any)[0])
	assert.Contains(t, c["args"], "--receiver-only")
	assert.NotContains(t, c["args"], "--leader-elect")

	podLabels, _, err := unstructured.NestedStringMap(recv.Object, "spec", "template", "metadata", "labels")
	require.NoError(t, err)
	selector, _, err := unstructured.NestedStringMap(find(t, rendered, "Service", "bg-gitops-receiver").Object, "spec", "selector")
	require.NoError(t, err)
	assert.Equal(t, podLabels, selector)
	assert.NotEqual(t, "bg-gitops", podLabels["app.kubernetes.io/name"],
		"not labelled as the controller, which `bg-gitops check` and `version` look for")
}
