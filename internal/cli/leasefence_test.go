/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"bggitops.dev/bg-gitops/internal/kube"
)

// TestLeaseFence: the fence that guards commit statuses reads the Lease
// from the API server: it passes while the lease names this replica and
// is current, and refuses once another replica took it over (a leader
// paused past its lease) or it expired.
func TestLeaseFence(t *testing.T) {
	env := cluster(t)
	ctx := t.Context()
	ns := newNamespace(t, env)
	mine, err := kube.LeaderLock(env.Config, ns, "fence", renewDeadline)
	require.NoError(t, err)
	theirs, err := kube.LeaderLock(env.Config, ns, "fence", renewDeadline)
	require.NoError(t, err)
	require.NotEqual(t, mine.Identity(), theirs.Identity())
	fence := &kube.LeaseFence{Lock: mine, LeaseDuration: leaseDuration}

	require.Error(t, fence.Check(ctx), "no Lease yet")

	renewed := time.Now()
	record := func(holder string, at time.Time) resourcelock.LeaderElectionRecord {
		return resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: int(leaseDuration.Seconds()),
			AcquireTime: metav1.NewTime(at), RenewTime: metav1.NewTime(at)}
	}
	require.NoError(t, mine.Create(ctx, record(mine.Identity(), renewed)))
	assert.NoError(t, fence.Check(ctx), "held and current")

	fence.Now = func() time.Time { return renewed.Add(leaseDuration + time.Second) }
	assert.ErrorIs(t, fence.Check(ctx), kube.ErrNotLeader, "held, but expired by this replica's clock")
	fence.Now = nil

	_, _, err = theirs.Get(ctx) // the lock updates the Lease it read
	require.NoError(t, err)
	require.NoError(t, theirs.Update(ctx, record(theirs.Identity(), time.Now())))
	err = fence.Check(ctx)
	assert.ErrorIs(t, err, kube.ErrNotLeader, "taken over")
	assert.Contains(t, err.Error(), theirs.Identity())
}
