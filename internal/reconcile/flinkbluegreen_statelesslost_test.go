/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// A stateless transition starts green at once. Its status is then lost
// (written back as it was before the commit, ACTIVE_BLUE with the old
// spec, as a restored status or a lost write leaves it) while green
// starts: the controller takes green up again as the new colour of the
// pending change and cuts over to it; green is never deleted. (Failed on
// the code as it was: green was deleted as a leftover and created again.)
func TestALostStatusWriteAfterAStatelessStartKeepsTheNewColour(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	stateless := func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Job.UpgradeMode = v1alpha1.UpgradeModeStateless
	}
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	stateless(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	before := getFBGD(t, ns, "job").Status

	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "4s"`, stateless)
	eventually(t, ns, "green started", func() bool { _, ok := child(ns, "job-green"); return ok })
	green, _ := child(ns, "job-green")
	require.Eventually(t, func() bool {
		p := getFBGD(t, ns, "job")
		p.Status = *before.DeepCopy()
		return env.Client.Status().Update(context.Background(), p) == nil
	}, waitFor, 50*time.Millisecond)

	eventually(t, ns, "ACTIVE_GREEN", func() bool {
		g, ok := child(ns, "job-green")
		require.True(t, ok, "green is gone")
		require.Equal(t, green.GetUID(), g.GetUID(), "green was created again")
		require.Nil(t, g.GetDeletionTimestamp(), "green is being deleted")
		return state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning)()
	})
	eventually(t, ns, "blue deleted", func() bool { _, ok := child(ns, "job-blue"); return !ok })
	h := getFBGD(t, ns, "job").Status.History
	assert.Equal(t, revision(2), h[len(h)-1].Revision)
	assert.Equal(t, v1alpha1.RolloutSucceeded, h[len(h)-1].Outcome)
}
