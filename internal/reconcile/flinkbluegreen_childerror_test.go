/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// A new colour whose spec the Flink operator refuses (status.error, the
// spec never observed): the parent's Reconciling condition names the
// operator's error while it waits, and its status.error when the
// transition aborts; blue runs on. (Failed on the code as it was: both
// said only "spec not yet observed by the Flink operator".)
func TestTheFlinkOperatorsRefusalIsNamedInTheParent(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	require.NoError(t, env.Client.Create(context.Background(), fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))

	refused := `, "` + flinksim.FaultSpecError + `": "Forbidden Flink config key: kubernetes.namespace"`
	update(t, ns, "job", 2, "flink:1.20.1", refused, withAbortGrace("6s"))
	want := "Flink operator error: ValidationException: Forbidden Flink config key: kubernetes.namespace"
	eventually(t, ns, "the refusal named while waiting", func() bool {
		c := apimeta.FindStatusCondition(getFBGD(t, ns, "job").Status.Conditions, v1alpha1.ReconcilingCondition)
		return c != nil && strings.Contains(c.Message, want)
	})
	eventually(t, ns, "aborted", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	p := getFBGD(t, ns, "job")
	assert.Contains(t, p.Status.Error, want)
	assert.NotContains(t, p.Status.Error, "not yet observed")
	blue, ok := child(ns, "job-blue")
	require.True(t, ok)
	assert.Equal(t, "RUNNING", nested(blue, "status", "jobStatus", "state"))
}
