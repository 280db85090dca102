/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_children.go: the child FlinkDeployments and the
// FlinkStateSnapshots as objects — building them, reading them back, and
// checking who owns them.

package reconcile

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

func newUnstructured(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

func ownerRef(p *v1alpha1.FlinkBlueGreenDeployment) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.FlinkBlueGreenDeploymentKind,
		Name: p.Name, UID: p.UID, BlockOwnerDeletion: ptr(true), Controller: ptr(false),
	}
}

func ptr[T any](v T) *T { return &v }

// childObject is the FlinkDeployment of one colour, as FLIP-503 builds it.
func childObject(p *v1alpha1.FlinkBlueGreenDeployment, cs *bluegreen.ChildSpec) (*unstructured.Unstructured, error) {
	spec, err := toMap(cs.Spec)
	if err != nil {
		return nil, fmt.Errorf("child %s spec: %w", cs.Name, err)
	}
	u := newUnstructured(v1alpha1.FlinkDeploymentGVK)
	u.SetName(cs.Name)
	u.SetNamespace(p.Namespace)
	u.SetLabels(childLabels(p, cs.Color))
	if cs.Revision != "" {
		u.SetAnnotations(map[string]string{v1alpha1.RevisionAnnotation: cs.Revision})
	}
	u.SetOwnerReferences([]metav1.OwnerReference{ownerRef(p)})
	u.Object["spec"] = spec
	return u, nil
}

// snapshotObject is the FlinkStateSnapshot that savepoints a child's job,
// in the format bluegreen chose; without one, in the operator's default.
// It is labelled with the parent's name (unless the name is too long for a
// label value: a savepoint matters more than its label) and carries the
// revision whose rollout it is for.
func snapshotObject(p *v1alpha1.FlinkBlueGreenDeployment, s *bluegreen.SnapshotSpec) *unstructured.Unstructured {
	u := newUnstructured(v1alpha1.FlinkStateSnapshotGVK)
	u.SetName(s.Name)
	u.SetNamespace(p.Namespace)
	if len(validation.IsValidLabelValue(p.Name)) == 0 {
		u.SetLabels(map[string]string{v1alpha1.FlinkBlueGreenDeploymentLabel: p.Name})
	}
	u.SetAnnotations(snapshotAnnotations(s))
	savepoint := map[string]any{"disposeOnDelete": false}
	if s.FormatType != "" {
		savepoint["formatType"] = s.FormatType
	}
	if s.Record != nil {
		asRecord(u, s, savepoint)
	} else {
		u.SetOwnerReferences([]metav1.OwnerReference{ownerRef(p)})
	}
	u.Object["spec"] = map[string]any{
		"backoffLimit": int64(0),
		"jobReference": map[string]any{"kind": "FlinkDeployment", "name": s.JobName},
		"savepoint":    savepoint,
	}
	return u
}

// snapshotAnnotations are the revision the savepoint is for and the
// revision of the job it is taken of, those known; nil without either.
func snapshotAnnotations(s *bluegreen.SnapshotSpec) map[string]string {
	var a map[string]string
	for k, v := range map[string]string{v1alpha1.RevisionAnnotation: s.Revision, v1alpha1.JobRevisionAnnotation: s.JobRevision} {
		if v != "" {
			if a == nil {
				a = map[string]string{}
			}
			a[k] = v
		}
	}
	return a
}

// asRecord makes u the state record of a deletion: not owned (it
// outlives the parent), labelled as a record, naming the job it is of;
// a savepoint taken before is recorded as it is (alreadyExists).
func asRecord(u *unstructured.Unstructured, s *bluegreen.SnapshotSpec, savepoint map[string]any) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1alpha1.StateRecordLabel] = "true"
	u.SetLabels(labels)
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[v1alpha1.JobAnnotation] = s.JobName
	if s.Record.JobID != "" {
		a[v1alpha1.JobIDAnnotation] = s.Record.JobID
	}
	if s.Record.LastCompleted != "" {
		a[v1alpha1.LastCompletedSavepointAnnotation] = s.Record.LastCompleted
	}
	u.SetAnnotations(a)
	if s.Record.Existing != "" {
		savepoint["alreadyExists"] = true
		savepoint["path"] = s.Record.Existing
	}
}

func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, json.Unmarshal(data, &m)
}

// ObserveChild reads one colour's FlinkDeployment of p as the controller
// observes it; nil when absent. The PR plan (prplan.Input.ObserveChild)
// judges a change against what it runs.
func ObserveChild(ctx context.Context, c client.Reader, p *v1alpha1.FlinkBlueGreenDeployment, color bluegreen.Color) (*bluegreen.Child, error) {
	return observeChild(ctx, c, p, color)
}

// observeChild reads one colour's FlinkDeployment; nil when absent.
func observeChild(ctx context.Context, c client.Reader, p *v1alpha1.FlinkBlueGreenDeployment, color bluegreen.Color) (*bluegreen.Child, error) {
	u := newUnstructured(v1alpha1.FlinkDeploymentGVK)
	name := bluegreen.ChildName(p.Name, color)
	if err := c.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	ours := metav1.IsControlledBy(u, p) || ownedBy(u, p)
	foreign := !ours && (u.GetDeletionTimestamp() != nil || ownedByEarlier(u, p))
	other := otherOwner(u)
	if !ours && !foreign && other != nil {
		return nil, stalledFailure("", "ObservationFailed",
			fmt.Errorf("FlinkDeployment %s is owned by %s %s, not by FlinkBlueGreenDeployment %s: rename or delete it", name, other.Kind, other.Name, p.Name))
	}
	ch, err := childFrom(u, color)
	if ch != nil {
		// One being deleted, or of an earlier object of p's name, is
		// waited for; one owned by nothing is adopted or refused.
		ch.Foreign = foreign
		ch.Unowned = !ours && !foreign
	}
	return ch, err
}

// otherOwner is the owner reference that makes u another object's child,
// as controllerutil.SetControllerReference sees it: a controller's, or a
// FlinkBlueGreenDeployment's (whose children carry no controller
// reference, see ownerRef). Nil when there is none: u may be adopted.
func otherOwner(u *unstructured.Unstructured) *metav1.OwnerReference {
	for _, r := range u.GetOwnerReferences() {
		if r.Kind == v1alpha1.FlinkBlueGreenDeploymentKind || r.Controller != nil && *r.Controller {
			return &r
		}
	}
	return nil
}

// ownedByEarlier reports a child of an earlier FlinkBlueGreenDeployment of
// p's name (another uid): the garbage collector deletes it.
func ownedByEarlier(u *unstructured.Unstructured, p *v1alpha1.FlinkBlueGreenDeployment) bool {
	for _, r := range u.GetOwnerReferences() {
		if r.Kind == v1alpha1.FlinkBlueGreenDeploymentKind && r.Name == p.Name && r.UID != p.UID {
			return true
		}
	}
	return false
}

func ownedBy(u *unstructured.Unstructured, p *v1alpha1.FlinkBlueGreenDeployment) bool {
	for _, r := range u.GetOwnerReferences() {
		if r.UID == p.UID {
			return true
		}
	}
	return false
}

func childFrom(u *unstructured.Unstructured, color bluegreen.Color) (*bluegreen.Child, error) {
	ch := &bluegreen.Child{Name: u.GetName(), Color: color, Revision: u.GetAnnotations()[v1alpha1.RevisionAnnotation],
		Labels: u.GetLabels(), Deleting: u.GetDeletionTimestamp() != nil, Generation: u.GetGeneration(), Created: u.GetCreationTimestamp().Time,
		UID: string(u.GetUID()), ResourceVersion: u.GetResourceVersion(), Overridden: overridden(u.Object["spec"], u.GetManagedFields())}
	ch.ObservedGeneration, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if err := fromMap(u.Object["spec"], &ch.Spec); err != nil {
		return nil, fmt.Errorf("read FlinkDeployment %s: %w", u.GetName(), err)
	}
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	ch.LifecycleState = str("status", "lifecycleState")
	ch.JobState = str("status", "jobStatus", "state")
	ch.JobID = str("status", "jobStatus", "jobId")
	ch.UpgradeSavepointPath = str("status", "jobStatus", "upgradeSavepointPath")
	ch.Error = str("status", "error")
	return ch, nil
}

func fromMap(m any, into any) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// observeSnapshot reads the FlinkStateSnapshot named in status; nil when absent.
func observeSnapshot(ctx context.Context, c client.Reader, p *v1alpha1.FlinkBlueGreenDeployment) (*bluegreen.Snapshot, error) {
	if p.Status.Savepoint == nil || p.Status.Savepoint.Name == "" {
		return nil, nil
	}
	u := newUnstructured(v1alpha1.FlinkStateSnapshotGVK)
	err := c.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: p.Status.Savepoint.Name}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	return &bluegreen.Snapshot{Name: u.GetName(), State: str("status", "state"), Path: str("status", "path"), Error: str("status", "error"),
		LastCompleted: u.GetAnnotations()[v1alpha1.LastCompletedSavepointAnnotation], Created: u.GetCreationTimestamp().Time,
		Foreign: foreignSnapshot(p, u)}, nil
}

// foreignSnapshot says why the FlinkStateSnapshot u is not one bg-gitops
// created for p, "" when it is. Snapshots are ours only if we made them:
// the uid the API server gave the snapshot bg-gitops's own create made
// (status.savepoint.uid, see createSnapshot) is the proof. Owner
// references, labels and names prove nothing: whoever may create a
// snapshot in p's namespace can read p's uid and predict the next name.
// A snapshot created under that name before bg-gitops asked for it
// (AlreadyExists), or after its own was deleted, has another uid.
//
// The one exception is the state record of p's deletion (see
// ownRecord), which outlives p by design: it is still checked by its
// name and label alone.
func foreignSnapshot(p *v1alpha1.FlinkBlueGreenDeployment, u *unstructured.Unstructured) string {
	job, _, _ := unstructured.NestedString(u.Object, "spec", "jobReference", "name")
	if job != bluegreen.ChildName(p.Name, bluegreen.Blue) && job != bluegreen.ChildName(p.Name, bluegreen.Green) {
		return fmt.Sprintf("its job is %q, not a job of %s", job, p.Name)
	}
	if ownRecord(p, u) {
		return ""
	}
	if why := notCreatedByUs(p, u); why != "" {
		return why
	}
	// Its spec can still have been changed since it was created: one that
	// names an existing savepoint (alreadyExists) would be completed by
	// the operator with the path its writer chose; the savepoints
	// bg-gitops asks for are taken of the job by the operator.
	if existing, _, _ := unstructured.NestedBool(u.Object, "spec", "savepoint", "alreadyExists"); existing {
		return "it names an existing savepoint (alreadyExists) instead of asking for one of the job"
	}
	return ""
}

// ownRecord reports the state record of p's own deletion (named after p's
// uid, bluegreen.FinalSnapshotName, and labelled a record). Its rule is
// kept as it was, name and label, and no uid is asked of it: a record is
// read by a later object of p's name (observeRecord, by its labels),
// after p and the status that recorded the record's uid are gone, so no
// uid of bg-gitops's create survives to compare with; and while p is
// deleted, its final savepoint is waited for whatever Foreign says
// (bluegreen's awaitsFinalSavepoint). The uid of the record's create is
// recorded all the same (createSnapshot), for whoever reads p's status.
// The label vouches for nothing else: a transition's savepoint is never
// a record.
func ownRecord(p *v1alpha1.FlinkBlueGreenDeployment, u *unstructured.Unstructured) bool {
	return u.GetLabels()[v1alpha1.StateRecordLabel] == "true" && u.GetName() == bluegreen.FinalSnapshotName(p)
}

// notCreatedByUs says why u is not the snapshot whose creation bg-gitops
// recorded in p's status ("" when it is). A status without a uid (one
// written by an earlier version of bg-gitops, or whose write after the
// create was lost while the controller restarted) trusts no snapshot:
// the rollout fails safe, its old colour running, and a retry asks under
// another name.
func notCreatedByUs(p *v1alpha1.FlinkBlueGreenDeployment, u *unstructured.Unstructured) string {
	want := p.Status.Savepoint.UID
	switch {
	case want == "":
		return "bg-gitops recorded no uid of a snapshot of that name it created (status.savepoint.uid is empty)"
	case u.GetUID() != want:
		return fmt.Sprintf("its uid is %s, not %s, the one bg-gitops created", u.GetUID(), want)
	}
	return ""
}

// missingFlinkCRD explains a cluster without the Flink operator's CRDs.
// controller-runtime's RESTMapper answers a NoKindMatchError, or an
// ErrResourceDiscoveryFailed that unwraps to a NoResourceMatchError.
func missingFlinkCRD(err error) (string, bool) {
	if !meta.IsNoMatchError(err) {
		return "", false
	}
	return "the FlinkDeployment/FlinkStateSnapshot CRDs (flink.apache.org/v1beta1) are not installed: install the Flink Kubernetes Operator", true
}
