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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// The children carry the parent's labels, so a Flink operator that
// watches by label selector (kubernetes.operator.label.selector)
// reconciles them: blue when it is created, a label added to the parent
// later reaches the running child, and green carries them from its
// creation. The colour label stays the controller's. (Failed on the code
// as it was: blue carried only flink/blue-green-deployment-type.)
func TestChildrenCarryTheParentsLabels(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	p.Labels = map[string]string{"flink-shard": "a", "flink/blue-green-deployment-type": "GREEN"}
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ := child(ns, "job-blue")
	assert.Equal(t, map[string]string{"flink-shard": "a", "flink/blue-green-deployment-type": "BLUE"}, blue.GetLabels())

	p = getFBGD(t, ns, "job")
	patch := client.MergeFrom(p.DeepCopy())
	p.Labels["team"] = "payments"
	require.NoError(t, env.Client.Patch(context.Background(), p, patch))
	eventually(t, ns, "the new label on blue", func() bool {
		blue, _ := child(ns, "job-blue")
		return blue.GetLabels()["team"] == "payments"
	})

	update(t, ns, "job", 2, "flink:1.20.1", "")
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ := child(ns, "job-green")
	assert.Equal(t, map[string]string{"flink-shard": "a", "team": "payments", "flink/blue-green-deployment-type": "GREEN"}, green.GetLabels())
}
