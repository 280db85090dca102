/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// lease.go: the leader election lock (LeaderLock, NewIdentity) and
// LeaseFence, which checks against the API server that this replica still
// holds the leader lease.

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

// NewIdentity is a leader election identity made as controller-runtime
// makes it: the host name and a UUID.
func NewIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// LeaderLock is a Lease lock of leader election for identity. The
// controller creates the one its manager uses here, so that a LeaseFence,
// with a lock of its own for the same identity, can read the Lease too (a
// lock is not safe for use by two goroutines).
func LeaderLock(cfg *rest.Config, namespace, name, identity string, renewDeadline time.Duration) (resourcelock.Interface, error) {
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
		resourcelock.ResourceLockConfig{Identity: identity})
}

// ErrNotLeader: the replica does not hold the leader lease (any more).
var ErrNotLeader = errors.New("this replica does not hold the leader lease")

// LeaseFence tells whether this replica holds the leader lease now, read
// from the API server. Leader election alone does not stop a leader that
// was paused (SIGSTOP, a long GC, a frozen VM) past its lease: when it
// runs again it acts until its next renewal fails, next to the replica
// that took over. An effect outside the cluster that must not happen
// twice — a commit status — checks the fence first, and finishes before
// the lease it saw runs out.
type LeaseFence struct {
	// Lock reads the Lease; its own, not the elector's.
	Lock resourcelock.Interface
	// LeaseDuration is the leader election's lease duration.
	LeaseDuration time.Duration
	// Now is time.Now when nil.
	Now func() time.Time
}

// Check returns until when the lease is this replica's: while it names
// this replica and has not expired by this replica's clock (which wrote
// its renew time); else ErrNotLeader or the read error. No other replica
// can take the lease before that time.
func (f *LeaseFence) Check(ctx context.Context) (time.Time, error) {
	rec, _, err := f.Lock.Get(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the leader lease: %w", err)
	}
	now := time.Now()
	if f.Now != nil {
		now = f.Now()
	}
	until := rec.RenewTime.Add(f.LeaseDuration)
	if rec.HolderIdentity != f.Lock.Identity() {
		return time.Time{}, fmt.Errorf("%w: %s holds it", ErrNotLeader, rec.HolderIdentity)
	}
	if !now.Before(until) {
		return time.Time{}, fmt.Errorf("%w: it expired at %s", ErrNotLeader, until.UTC().Format(time.RFC3339))
	}
	return until, nil
}
