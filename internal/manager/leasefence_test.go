/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of the Lease fence that guards the controller's commit statuses, against
// a real API server.

package manager

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
	lock := func() resourcelock.Interface {
		id, err := kube.NewIdentity()
		require.NoError(t, err)
		l, err := kube.LeaderLock(env.Config, ns, "fence", id, renewDeadline)
		require.NoError(t, err)
		return l
	}
	mine, theirs := lock(), lock()
	require.NotEqual(t, mine.Identity(), theirs.Identity())
	fence := &kube.LeaseFence{Lock: mine, LeaseDuration: leaseDuration}

	_, err := fence.Check(ctx)
	require.Error(t, err, "no Lease yet")

	renewed := time.Now()
	record := func(holder string, at time.Time) resourcelock.LeaderElectionRecord {
		return resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: int(leaseDuration.Seconds()),
			AcquireTime: metav1.NewTime(at), RenewTime: metav1.NewTime(at)}
	}
	require.NoError(t, mine.Create(ctx, record(mine.Identity(), renewed)))
	until, err := fence.Check(ctx)
	assert.NoError(t, err, "held and current")
	assert.WithinDuration(t, renewed.Add(leaseDuration), until, time.Millisecond, "held until the renewal plus the lease duration")

	fence.Now = func() time.Time { return renewed.Add(leaseDuration + time.Second) }
	_, err = fence.Check(ctx)
	assert.ErrorIs(t, err, kube.ErrNotLeader, "held, but expired by this replica's clock")
	fence.Now = nil

	_, _, err = theirs.Get(ctx) // the lock updates the Lease it read
	require.NoError(t, err)
	require.NoError(t, theirs.Update(ctx, record(theirs.Identity(), time.Now())))
	_, err = fence.Check(ctx)
	assert.ErrorIs(t, err, kube.ErrNotLeader, "taken over")
	assert.Contains(t, err.Error(), theirs.Identity())
}
