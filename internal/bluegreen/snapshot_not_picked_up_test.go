/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// With the Flink operator's snapshot controller off
// (kubernetes.operator.snapshot.resource.enabled: false), a
// FlinkStateSnapshot never gets a status while the job runs on. The
// rollout fails once the snapshot pickup timeout has passed, long before
// the savepoint timeout, naming the setting; blue is untouched and keeps
// running. A snapshot that has a status, however slow, waits for the
// savepoint timeout as before. (Failed on the code as it was: the rollout
// waited the whole savepoint timeout and then blamed the savepoint.)
func TestASnapshotTheOperatorNeverPicksUpFailsTheRolloutNamingTheSetting(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.snapshotsIgnored = true
	blue := *w.mustChild(Blue)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	w.expectState(sSpBlue, jReconciling)
	if d.RequeueAfter > 15*time.Second {
		w.fatalf("requeue %s: the pickup timeout is not polled in time", d.RequeueAfter)
	}
	w.advance(59 * time.Second)
	w.step()
	w.expectState(sSpBlue, jReconciling)
	w.advance(time.Second)
	d = w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectEvents(d, "SnapshotNotPickedUp")
	w.expectError(SnapshotResourceEnabledKey + ": false in the operator's configuration")
	w.expectError("orders-blue keeps running")
	if got := w.mustChild(Blue); got.JobID != blue.JobID || got.Deleting || got.suspendedSpec() || w.children[Green] != nil {
		w.fatalf("blue touched or green started: %+v, %v", got, w.childNames())
	}

	// A snapshot the operator picked up is not blamed on the setting.
	w = deployed(t, v1alpha1.UpgradeModeSavepoint)
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.step()
	w.advance(5 * time.Minute)
	w.step()
	w.expectState(sSpBlue, jReconciling)
}

// The pickup timeout is a spec.configuration key, shortened here.
func TestTheSnapshotPickupTimeoutIsConfigured(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeSavepoint)
	w.snapshotsIgnored = true
	w.config(v1alpha1.SnapshotPickupTimeoutKey, "5 s")
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	w.expectRequeue(w.step(), 5*time.Second)
	w.advance(5 * time.Second)
	w.step()
	w.expectState(sActiveBlue, jFailing)
	w.expectError("has no status 5s after it was created (" + v1alpha1.SnapshotPickupTimeoutKey + ")")
}
