/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// snapshot.go: the simulated FlinkStateSnapshot controller
// (reconcileSnapshot): a savepoint triggered and completed, or failed or
// hung as the faults ask.

package flinksim

import (
	"context"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

const pollInterval = 100 * time.Millisecond

func (s *Simulator) reconcileSnapshot(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	snap := &unstructured.Unstructured{}
	snap.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	if err := s.client.Get(ctx, req.NamespacedName, snap); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	sn := deployment{snap} // the same nested accessors serve
	if s.snapshotControllerOff(ctx, sn) {
		return reconcile.Result{}, nil
	}
	switch sn.str("status", "state") {
	case "":
		if existing, _, _ := unstructured.NestedBool(snap.Object, "spec", "savepoint", "alreadyExists"); existing {
			// The operator records a savepoint that already exists as
			// it is: COMPLETED at once, with the path it names.
			sn.setStatus("COMPLETED", "state")
			sn.setStatus(sn.str("spec", "savepoint", "path"), "path")
			sn.setStatus(s.now().UTC().Format(time.RFC3339Nano), "resultTimestamp")
			return reconcile.Result{}, s.client.Status().Update(ctx, snap)
		}
		sn.setStatus("TRIGGER_PENDING", "state")
		sn.setStatus(s.now().UTC().Format(time.RFC3339Nano), "triggerTimestamp")
		return reconcile.Result{RequeueAfter: pollInterval}, s.client.Status().Update(ctx, snap)
	case "TRIGGER_PENDING":
		return s.trigger(ctx, sn)
	case "IN_PROGRESS":
		return s.complete(ctx, sn)
	}
	return reconcile.Result{}, nil
}

// snapshotControllerOff reports a snapshot no snapshot controller would
// reconcile: Options.SnapshotControllerOff, or FaultSnapshotControllerOff
// on the job it refers to.
func (s *Simulator) snapshotControllerOff(ctx context.Context, sn deployment) bool {
	if s.opts.SnapshotControllerOff {
		return true
	}
	d, _ := s.job(ctx, sn)
	return d.Unstructured != nil && configValue(d.Unstructured, FaultSnapshotControllerOff) == "true"
}

// job returns the running FlinkDeployment a snapshot refers to.
func (s *Simulator) job(ctx context.Context, sn deployment) (deployment, bool) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	key := types.NamespacedName{Namespace: sn.GetNamespace(), Name: sn.str("spec", "jobReference", "name")}
	if err := s.client.Get(ctx, key, u); err != nil {
		return deployment{}, false
	}
	d := deployment{u}
	return d, d.str("status", "jobStatus", "state") == "RUNNING" && u.GetDeletionTimestamp() == nil
}

func (s *Simulator) fail(ctx context.Context, sn deployment, msg string) (reconcile.Result, error) {
	sn.setStatus("FAILED", "state")
	sn.setStatus(msg, "error")
	sn.setStatus(int64(1), "failures")
	sn.setStatus(s.now().UTC().Format(time.RFC3339Nano), "resultTimestamp")
	return reconcile.Result{}, s.client.Status().Update(ctx, sn.Unstructured)
}

func (s *Simulator) trigger(ctx context.Context, sn deployment) (reconcile.Result, error) {
	d, ok := s.job(ctx, sn)
	if !ok {
		return s.fail(ctx, sn, "job "+sn.str("spec", "jobReference", "name")+" is not running")
	}
	switch s.savepointFault(d, sn) {
	case "fail":
		return s.fail(ctx, sn, "simulated savepoint failure")
	case "hang":
		s.markFaulted(sn)
	}
	sn.setStatus("IN_PROGRESS", "state")
	sn.setStatus(newID(), "triggerId")
	return reconcile.Result{RequeueAfter: s.savepointDelay(d)}, s.client.Status().Update(ctx, sn.Unstructured)
}

// savepointDelay is how long a savepoint of d's job takes.
func (s *Simulator) savepointDelay(d deployment) time.Duration {
	if v, err := time.ParseDuration(configValue(d.Unstructured, FaultSavepointDelay)); err == nil {
		return v
	}
	return s.opts.SavepointDelay
}

func (s *Simulator) complete(ctx context.Context, sn deployment) (reconcile.Result, error) {
	d, ok := s.job(ctx, sn)
	if !ok {
		return s.fail(ctx, sn, "job "+sn.str("spec", "jobReference", "name")+" stopped during the savepoint")
	}
	if s.hangs(d, sn) {
		return reconcile.Result{}, nil
	}
	started, _ := time.Parse(time.RFC3339Nano, sn.str("status", "triggerTimestamp"))
	if wait := started.Add(s.savepointDelay(d)).Sub(s.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	jobID := d.str("status", "jobStatus", "jobId")
	path := savepointPath(d.Unstructured, jobID)
	offset, _ := s.lineage.offset(jobID, s.now())
	s.lineage.addSavepoint(Savepoint{Path: path, JobID: jobID, Offset: offset, At: s.now()})
	sn.setStatus("COMPLETED", "state")
	sn.setStatus(path, "path")
	sn.setStatus(s.now().UTC().Format(time.RFC3339Nano), "resultTimestamp")
	return reconcile.Result{}, s.client.Status().Update(ctx, sn.Unstructured)
}

// savepointFault is the FaultSavepoint value that applies to a snapshot
// being triggered: "" once FaultSavepointTimes savepoints of d were hit.
func (s *Simulator) savepointFault(d deployment, sn deployment) string {
	fault := configValue(d.Unstructured, FaultSavepoint)
	if fault == "" {
		return ""
	}
	times, err := strconv.Atoi(configValue(d.Unstructured, FaultSavepointTimes))
	if err != nil {
		return fault
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.savepointFaults[d.GetUID()] >= times {
		return ""
	}
	s.savepointFaults[d.GetUID()]++
	return fault
}

func (s *Simulator) markFaulted(sn deployment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faulted[sn.GetUID()] = true
}

// hangs reports a snapshot that FaultSavepoint "hang" holds: every one
// without FaultSavepointTimes, else those it hit when triggered.
func (s *Simulator) hangs(d deployment, sn deployment) bool {
	if configValue(d.Unstructured, FaultSavepoint) != "hang" {
		return false
	}
	if _, err := strconv.Atoi(configValue(d.Unstructured, FaultSavepointTimes)); err != nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faulted[sn.GetUID()]
}
