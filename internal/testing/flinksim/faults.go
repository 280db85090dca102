/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// faults.go: a spec observed late (observe) or refused (refuse), and a job
// that fails (maybeFail) or flaps (maybeRestart), as the Fault annotations
// ask.

package flinksim

import (
	"context"
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// observe acts on a new spec once the observe delay has passed, leaving the
// status untouched until then: the operator sets observedGeneration only
// when it reconciles the spec (ReconciliationStatus.
// serializeAndSetLastReconciledSpec, ReconciliationUtils.
// updateReconciliationMetadata), so meanwhile a client reads the previous
// generation's status (STABLE, RUNNING).
func (s *Simulator) observe(ctx context.Context, d deployment) (reconcile.Result, error) {
	if wait := s.observeWait(d); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	if msg := configValue(d.Unstructured, FaultSpecError); msg != "" {
		return reconcile.Result{}, s.refuse(ctx, d, msg)
	}
	res, err := s.deploy(ctx, d)
	if err == nil {
		s.forgetSeen(d)
	}
	return res, err
}

// observeWait is how long the current generation still goes unobserved,
// measured from when the simulator first saw it.
func (s *Simulator) observeWait(d deployment) time.Duration {
	delay := s.opts.ObserveDelay
	if v, err := time.ParseDuration(configValue(d.Unstructured, FaultObserveDelay)); err == nil {
		delay = v
	}
	if delay <= 0 {
		return 0
	}
	key := types.NamespacedName{Namespace: d.GetNamespace(), Name: d.GetName()}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, ok := s.seen[key]
	if !ok || seen.generation != d.GetGeneration() {
		seen = seenGen{generation: d.GetGeneration(), at: s.now()}
		s.seen[key] = seen
	}
	return seen.at.Add(delay).Sub(s.now())
}

// refuse reports a spec the operator's validation refused (see
// FaultSpecError).
func (s *Simulator) refuse(ctx context.Context, d deployment, msg string) error {
	e, err := json.Marshal(map[string]any{"type": "org.apache.flink.kubernetes.operator.exception.ValidationException",
		"message": msg, "additionalMetadata": map[string]any{}, "throwableList": []any{}})
	if err != nil {
		return err
	}
	if d.str("status", "error") == string(e) {
		return nil
	}
	d.setStatus(string(e), "error")
	if d.str("status", "jobStatus", "jobId") == "" {
		d.setStatus("FAILED", "lifecycleState")
	}
	return s.client.Status().Update(ctx, d.Unstructured)
}

func (s *Simulator) forgetSeen(d deployment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, types.NamespacedName{Namespace: d.GetNamespace(), Name: d.GetName()})
}

// failAfter is how long a RUNNING job runs before it fails: FaultFailAfter,
// else the period of FaultFlap.
func failAfter(d deployment) (time.Duration, bool) {
	for _, key := range []string{FaultFailAfter, FaultFlap} {
		if v, err := time.ParseDuration(configValue(d.Unstructured, key)); err == nil {
			return v, true
		}
	}
	return 0, false
}

func (s *Simulator) maybeFail(ctx context.Context, d deployment) (reconcile.Result, error) {
	after, ok := failAfter(d)
	if !ok {
		return reconcile.Result{}, nil
	}
	if wait := d.updatedAt().Add(after).Sub(s.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	now := s.now()
	s.lineage.stopJob(d.str("status", "jobStatus", "jobId"), Stop{At: now, Reason: StopFailed, Revision: d.revision()})
	d.setStatus("FAILED", "lifecycleState")
	d.setStatus("FAILED", "jobStatus", "state")
	d.setStatus("simulated job failure", "error")
	d.setStatus(now.UTC().Format(time.RFC3339Nano), "jobStatus", "updateTime")
	return reconcile.Result{}, s.client.Status().Update(ctx, d.Unstructured)
}

// maybeRestart resubmits a flapping job that has been FAILED for the flap
// period, as the operator resubmits a FAILED job when
// kubernetes.operator.job.restart.failed is set
// (AbstractJobReconciler.reconcileOtherChanges → resubmitJob), under a new
// jobId (ApplicationReconciler.setJobIdIfNecessary rotates it unless the
// deployment is last-state). The operator would restore from
// upgradeSavepointPath; the simulator restores from the failed job's last
// checkpoint, as a last-state restart or Flink's own restart strategy does,
// so the flap loses no offset.
func (s *Simulator) maybeRestart(ctx context.Context, d deployment) (reconcile.Result, error) {
	period, err := time.ParseDuration(configValue(d.Unstructured, FaultFlap))
	if err != nil {
		return reconcile.Result{}, nil
	}
	if wait := d.updatedAt().Add(period).Sub(s.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	from := restorePath(d, false)
	if failed := d.str("status", "jobStatus", "jobId"); s.lineage.known(failed) {
		from = s.recordState(checkpointPath(d.Unstructured, failed), failed)
	}
	unstructured.RemoveNestedField(d.Object, "status", "error")
	return s.submit(ctx, d, from)
}
