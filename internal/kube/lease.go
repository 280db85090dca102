/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderLock is the Lease lock of leader election, with an identity made
// as controller-runtime makes it (host name and a UUID). It is created
// here rather than by the manager so that a LeaseFence can read it.
func LeaderLock(cfg *rest.Config, namespace, name string, renewDeadline time.Duration) (resourcelock.Interface, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	// One hung request must not cost the lease (as controller-runtime).
	cfg.Timeout = max(renewDeadline/2, time.Second)
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	coord, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return resourcelock.New(resourcelock.LeasesResourceLock, namespace, name, core, coord,
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
}

// ErrNotLeader: the replica does not hold the leader lease (any more).
var ErrNotLeader = errors.New("this replica does not hold the leader lease")

// LeaseFence tells whether this replica holds the leader lease now, read
// from the API server. Leader election alone does not stop a leader that
// was paused (SIGSTOP, a long GC, a frozen VM) past its lease: when it
// runs again it acts until its next renewal fails, next to the replica
// that took over. An effect outside the cluster that must not happen
// twice — a commit status — checks the fence first.
type LeaseFence struct {
	Lock resourcelock.Interface
	// LeaseDuration is the leader election's lease duration.
	LeaseDuration time.Duration
	// Now is time.Now when nil.
	Now func() time.Time
}

// Check returns nil while the lease names this replica and has not
// expired by this replica's clock (which wrote its renew time), else
// ErrNotLeader or the read error.
func (f *LeaseFence) Check(ctx context.Context) error {
	rec, _, err := f.Lock.Get(ctx)
	if err != nil {
		return fmt.Errorf("read the leader lease: %w", err)
	}
	now := time.Now()
	if f.Now != nil {
		now = f.Now()
	}
	if rec.HolderIdentity != f.Lock.Identity() {
		return fmt.Errorf("%w: %s holds it", ErrNotLeader, rec.HolderIdentity)
	}
	if !now.Before(rec.RenewTime.Add(f.LeaseDuration)) {
		return fmt.Errorf("%w: it expired at %s", ErrNotLeader, rec.RenewTime.Add(f.LeaseDuration).UTC().Format(time.RFC3339))
	}
	return nil
}
