/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// A commit that lands while green waits out the deletion delay re-specs
// green; the simulated operator then takes 8 s to observe it, reporting
// green STABLE and RUNNING at its previous generation all that while,
// past the 2 s delay. Blue is kept until green runs the new spec, and
// only then cut over. (Passed on the code as it was when written: the
// decision drops the recorded readiness when it re-specs green, and a
// child is ready only once the operator has observed its spec.)
func TestAParentEditDuringTheDeletionDelayKeepsTheOldColour(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	stateless(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))

	update(t, ns, "job", 2, "flink:1.20.1", "", stateless, withDeletionDelay("2s"))
	eventually(t, ns, "green ready, blue kept for the deletion delay", func() bool {
		return getFBGD(t, ns, "job").Status.DeploymentReadyTimestamp != nil
	})
	update(t, ns, "job", 3, "flink:1.20.1", `, "bggitops.dev/simulate-observe-delay": "8s"`, stateless, withDeletionDelay("2s"),
		func(p *v1alpha1.FlinkBlueGreenDeployment) { p.Spec.Template.Spec.Job.Parallelism = ptr(int32(4)) })
	eventually(t, ns, "green observes the edited spec, blue kept meanwhile", func() bool {
		blue, ok := child(ns, "job-blue")
		require.True(t, ok && blue.GetDeletionTimestamp() == nil, "blue deleted before green observed the edited spec")
		green, _ := child(ns, "job-green")
		observed, _, _ := unstructured.NestedInt64(green.Object, "status", "observedGeneration")
		return nested(green, "metadata", "annotations", v1alpha1.RevisionAnnotation) == revision(3) && observed == green.GetGeneration()
	})
	eventually(t, ns, "ACTIVE_GREEN with the edit", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	eventually(t, ns, "blue deleted", func() bool { _, ok := child(ns, "job-blue"); return !ok })
	require.Equal(t, revision(3), getFBGD(t, ns, "job").Status.ActiveRevision)
}

func stateless(p *v1alpha1.FlinkBlueGreenDeployment) {
	p.Spec.Template.Spec.Job.UpgradeMode = v1alpha1.UpgradeModeStateless
}
