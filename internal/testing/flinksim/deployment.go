/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// deployment.go: the simulated FlinkDeployment controller
// (reconcileDeployment): a job deployed, started, restored (restorePath),
// suspended and torn down.

package flinksim

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// deployment is a FlinkDeployment with typed accessors for what the
// simulator reads and writes.
type deployment struct{ *unstructured.Unstructured }

func (d deployment) str(path ...string) string {
	v, _, _ := unstructured.NestedString(d.Object, path...)
	return v
}

func (d deployment) setStatus(value any, path ...string) {
	_ = unstructured.SetNestedField(d.Object, value, append([]string{"status"}, path...)...)
}

func (d deployment) observedGeneration() int64 {
	v, _, _ := unstructured.NestedInt64(d.Object, "status", "observedGeneration")
	return v
}

func (d deployment) updatedAt() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, d.str("status", "jobStatus", "updateTime"))
	return t
}

// revision is the bggitops.dev/revision the controller stamped on it.
func (d deployment) revision() string { return d.GetAnnotations()[v1alpha1.RevisionAnnotation] }

func (d deployment) suspended() bool { return d.str("spec", "job", "state") == "suspended" }

func (d deployment) stateful() bool {
	return d.str("spec", "job", "upgradeMode") != "" && d.str("spec", "job", "upgradeMode") != "stateless"
}

func (s *Simulator) reconcileDeployment(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	if err := s.client.Get(ctx, req.NamespacedName, u); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	d := deployment{u}
	if u.GetDeletionTimestamp() != nil {
		return s.teardown(ctx, d)
	}
	if !controllerutil.ContainsFinalizer(u, Finalizer) {
		controllerutil.AddFinalizer(u, Finalizer)
		return reconcile.Result{}, s.client.Update(ctx, u)
	}
	if d.observedGeneration() != u.GetGeneration() {
		return s.observe(ctx, d)
	}
	return s.progress(ctx, d)
}

// teardown stops the job, removes its cluster's REST Service and releases
// the finalizer after TeardownDelay.
func (s *Simulator) teardown(ctx context.Context, d deployment) (reconcile.Result, error) {
	s.lineage.stopJob(d.str("status", "jobStatus", "jobId"), Stop{At: s.now(), Reason: StopDeleted,
		Revision: d.revision(), DeletedAt: d.GetDeletionTimestamp().Time})
	s.forgetSeen(d)
	if err := s.deleteRestService(ctx, d); err != nil {
		return reconcile.Result{}, err
	}
	wait := d.GetDeletionTimestamp().Add(s.opts.TeardownDelay).Sub(s.now())
	if wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	controllerutil.RemoveFinalizer(d.Unstructured, Finalizer)
	err := s.client.Update(ctx, d.Unstructured)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, err
}

// deploy reacts to a new spec: suspend, or (re)start the job.
func (s *Simulator) deploy(ctx context.Context, d deployment) (reconcile.Result, error) {
	oldJob := d.str("status", "jobStatus", "jobId")
	running := d.str("status", "jobStatus", "state") == "RUNNING"
	if running && d.stateful() {
		d.setStatus(s.internalSavepoint(d, oldJob), "jobStatus", "upgradeSavepointPath")
	}
	reason := StopRedeployed
	if d.suspended() {
		reason = StopSuspended
	}
	s.lineage.stopJob(oldJob, Stop{At: s.now(), Reason: reason, Revision: d.revision()})
	d.setStatus(d.GetGeneration(), "observedGeneration")
	unstructured.RemoveNestedField(d.Object, "status", "error") // an accepted spec clears a refusal
	if d.suspended() {
		// A suspended job has no JobManager, so no REST Service.
		if err := s.deleteRestService(ctx, d); err != nil {
			return reconcile.Result{}, err
		}
		d.setStatus(s.now().UTC().Format(time.RFC3339Nano), "jobStatus", "updateTime")
		d.setStatus("SUSPENDED", "lifecycleState")
		d.setStatus("SUSPENDED", "jobStatus", "state")
		d.setStatus("MISSING", "jobManagerDeploymentStatus")
		return reconcile.Result{}, s.client.Status().Update(ctx, d.Unstructured)
	}
	// No job yet: the first deployment of a running spec (one created
	// suspended is first deployed when it is resumed). The operator copies
	// initialSavepointPath into upgradeSavepointPath, which later restores
	// use (AbstractFlinkResourceReconciler.updateStatusBeforeFirstDeployment).
	first := oldJob == ""
	if p := d.str("spec", "job", "initialSavepointPath"); first && p != "" {
		d.setStatus(p, "jobStatus", "upgradeSavepointPath")
	}
	return s.submit(ctx, d, restorePath(d, first))
}

// submit deploys a new job that restores from the given path (empty: fresh),
// with its cluster's REST Service.
func (s *Simulator) submit(ctx context.Context, d deployment, from string) (reconcile.Result, error) {
	if err := s.applyRestService(ctx, d); err != nil {
		return reconcile.Result{}, err
	}
	jobID := newID()
	s.setRestore(jobID, from)
	d.setStatus(s.now().UTC().Format(time.RFC3339Nano), "jobStatus", "updateTime")
	d.setStatus("DEPLOYED", "lifecycleState")
	d.setStatus("RECONCILING", "jobStatus", "state")
	d.setStatus(jobID, "jobStatus", "jobId")
	d.setStatus(d.GetName(), "jobStatus", "jobName")
	d.setStatus("DEPLOYING", "jobManagerDeploymentStatus")
	if err := s.client.Status().Update(ctx, d.Unstructured); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: s.startDelay(d)}, nil
}

// restorePath is the savepoint a (re)started job restores from. The first
// deployment uses spec.job.initialSavepointPath
// (AbstractFlinkResourceReconciler.reconcile → getInitialSnapshotPath); the
// operator never reads it again (JobSpec: @SpecDiff(IGNORE)). Later
// deployments in a stateful mode restore from upgradeSavepointPath, else
// savepointInfo.lastSavepoint.location, else start empty
// (AbstractJobReconciler.restoreJob); stateless ones start empty.
func restorePath(d deployment, first bool) string {
	if first {
		return d.str("spec", "job", "initialSavepointPath")
	}
	if !d.stateful() {
		return ""
	}
	if p := d.str("status", "jobStatus", "upgradeSavepointPath"); p != "" {
		return p
	}
	return d.str("status", "jobStatus", "savepointInfo", "lastSavepoint", "location")
}

// internalSavepoint models the savepoint the operator takes on a stateful
// upgrade or suspend of a running job.
func (s *Simulator) internalSavepoint(d deployment, jobID string) string {
	return s.recordState(savepointPath(d.Unstructured, jobID), jobID)
}

// recordState records a snapshot of the job's current (for a stopped job:
// last) offset at path and returns the path.
func (s *Simulator) recordState(path, jobID string) string {
	offset, _ := s.lineage.offset(jobID, s.now())
	s.lineage.addSavepoint(Savepoint{Path: path, JobID: jobID, Offset: offset, At: s.now()})
	return path
}

func (s *Simulator) startDelay(d deployment) time.Duration {
	if v, err := time.ParseDuration(configValue(d.Unstructured, StartDelay)); err == nil {
		return v
	}
	return s.opts.StartDelay
}

// progress moves a deployed job forward in time: RUNNING after the start
// delay (unless it never becomes ready), FAILED after a configured time,
// and, when it flaps, restarted after as long again.
func (s *Simulator) progress(ctx context.Context, d deployment) (reconcile.Result, error) {
	switch d.str("status", "jobStatus", "state") {
	case "RECONCILING":
		return s.start(ctx, d)
	case "RUNNING":
		return s.maybeFail(ctx, d)
	case "FAILED":
		return s.maybeRestart(ctx, d)
	}
	return reconcile.Result{}, nil
}

func (s *Simulator) start(ctx context.Context, d deployment) (reconcile.Result, error) {
	if configValue(d.Unstructured, FaultNeverReady) == "true" {
		return reconcile.Result{}, nil
	}
	if wait := d.updatedAt().Add(s.startDelay(d)).Sub(s.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	jobID := d.str("status", "jobStatus", "jobId")
	from, ok := s.takeRestore(jobID)
	if !ok { // submitted before this simulator started
		from = restorePath(d, false)
	}
	now := s.now()
	s.lineage.startJob(&Job{ID: jobID, Deployment: d.GetNamespace() + "/" + d.GetName(), RestoredFrom: from, StartedAt: now,
		Revision: d.revision()})
	d.setStatus("STABLE", "lifecycleState")
	d.setStatus("RUNNING", "jobStatus", "state")
	d.setStatus("READY", "jobManagerDeploymentStatus")
	d.setStatus(now.UTC().Format(time.RFC3339Nano), "jobStatus", "startTime")
	d.setStatus(now.UTC().Format(time.RFC3339Nano), "jobStatus", "updateTime")
	if err := s.client.Status().Update(ctx, d.Unstructured); err != nil {
		return reconcile.Result{}, err
	}
	return s.maybeFail(ctx, d)
}
