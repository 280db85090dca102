/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_snapshots.go: pruneSnapshots, which deletes the
// FlinkStateSnapshots bg-gitops created for a deployment that are no longer
// useful.

package reconcile

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/objects"
)

// pruneSnapshots deletes the FlinkStateSnapshots bg-gitops created for p
// that bluegreen.PrunableSnapshots says are no longer useful, once p
// rests in an ACTIVE state with nothing to do (st is the decision's
// status). Each deletion is preconditioned on the snapshot as observed, so
// one that changed since is left for the next reconcile.
func (r *FlinkBlueGreenReconciler) pruneSnapshots(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, in bluegreen.Input, st v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	if r.KeepSnapshots <= 0 || !p.DeletionTimestamp.IsZero() || !st.BlueGreenState.Active() {
		return nil
	}
	key, after := client.ObjectKeyFromObject(p), lastRollout(p, st)
	if done, _ := r.pruned.Load(key); done == after {
		return nil
	}
	own, err := ownSnapshots(ctx, r.Client, p)
	if err != nil {
		return err
	}
	for _, s := range bluegreen.PrunableSnapshots(p, []*bluegreen.Child{in.Blue, in.Green}, own, r.KeepSnapshots) {
		if err := deleteSnapshot(ctx, r.Client, p.Namespace, s); err != nil {
			return err
		}
		logf.FromContext(ctx).Info("deleted a FlinkStateSnapshot no longer needed", "snapshot", s.Name, "path", s.Path, "keep", r.KeepSnapshots)
	}
	r.pruned.Store(key, after)
	return nil
}

// lastRollout names the object and its last rollout: snapshots are pruned
// once per rollout that ended (and once per object after a start).
func lastRollout(p *v1alpha1.FlinkBlueGreenDeployment, st v1alpha1.FlinkBlueGreenDeploymentStatus) string {
	id := string(p.UID)
	if n := len(st.History); n > 0 {
		r := st.History[n-1]
		id += "/" + r.Revision + "/" + r.StartedAt.UTC().String() + "/" + string(r.Outcome)
	}
	return id
}

// ownSnapshots lists the FlinkStateSnapshots bg-gitops created to
// savepoint p's jobs: labelled with p's name, owned by p (this very
// object: its uid), not a state record. Any other is not bg-gitops's to
// delete; one of a name too long for a label is not found, and kept.
func ownSnapshots(ctx context.Context, c client.Reader, p *v1alpha1.FlinkBlueGreenDeployment) ([]bluegreen.OwnSnapshot, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK.GroupVersion().WithKind("FlinkStateSnapshotList"))
	if err := c.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels{v1alpha1.FlinkBlueGreenDeploymentLabel: p.Name}); err != nil {
		return nil, fmt.Errorf("list FlinkStateSnapshots of %s: %w", p.Name, err)
	}
	var own []bluegreen.OwnSnapshot
	for i := range list.Items {
		u := &list.Items[i]
		if u.GetLabels()[v1alpha1.StateRecordLabel] != "" || !ownedBy(u, p) || u.GetDeletionTimestamp() != nil {
			continue
		}
		state, _, _ := unstructured.NestedString(u.Object, "status", "state")
		path, _, _ := unstructured.NestedString(u.Object, "status", "path")
		own = append(own, bluegreen.OwnSnapshot{Name: u.GetName(), State: state, Path: path, Created: u.GetCreationTimestamp().Time,
			UID: string(u.GetUID()), ResourceVersion: u.GetResourceVersion()})
	}
	return own, nil
}

func deleteSnapshot(ctx context.Context, c client.Client, ns string, s bluegreen.OwnSnapshot) error {
	u := newUnstructured(v1alpha1.FlinkStateSnapshotGVK)
	u.SetNamespace(ns)
	u.SetName(s.Name)
	uid := types.UID(s.UID)
	err := c.Delete(ctx, u, client.Preconditions(metav1.Preconditions{UID: &uid, ResourceVersion: &s.ResourceVersion}))
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or changed since it was observed: the next reconcile sees
	}
	if err != nil {
		return fmt.Errorf("delete FlinkStateSnapshot %s: %w", s.Name, err)
	}
	return nil
}

// createdSnapshot is a FlinkStateSnapshot this replica created for the
// object uid parent, and the uid the API server gave it.
type createdSnapshot struct {
	parent, uid types.UID
	name        string
}

// createSnapshot creates the FlinkStateSnapshot s asks for and records in
// st the uid the API server gave it: only that snapshot is trusted (see
// foreignSnapshot). The decision was written first (bluegreen.
// StatusFirst), so only the replica whose write won creates it; the uid
// goes out in the status write after the actions.
//
// AlreadyExists records nothing: the snapshot found is one this replica
// created (its uid is recalled, see recallSnapshotUID), one another
// replica created, or one planted under the name, and only the first can
// be told apart from the last.
func (r *FlinkBlueGreenReconciler) createSnapshot(ctx context.Context, c client.Client, p *v1alpha1.FlinkBlueGreenDeployment,
	s *bluegreen.SnapshotSpec, st *v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	u := snapshotObject(p, s)
	err := c.Create(ctx, u, client.FieldOwner(objects.FieldManager))
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	r.created.Store(client.ObjectKeyFromObject(p), createdSnapshot{parent: p.UID, name: s.Name, uid: u.GetUID()})
	recordSnapshotUID(st, s.Name, u.GetUID())
	return nil
}

// recalledUID is the uid of the snapshot st names as this replica created
// it for p, when st does not record one ("" otherwise). The status write
// after a create can be lost (a conflict); the snapshot is then observed
// without its uid recorded, and this replica, which made it, still knows
// it. A replica that does not (it restarted, or another created the
// snapshot and stopped before its write) trusts it no more than a
// planted one: the rollout fails with SnapshotNotOurs, the old colour
// running, and a retry asks under another name.
func (r *FlinkBlueGreenReconciler) recalledUID(p *v1alpha1.FlinkBlueGreenDeployment, st *v1alpha1.FlinkBlueGreenDeploymentStatus) types.UID {
	sp := st.Savepoint
	if sp == nil || sp.UID != "" {
		return ""
	}
	v, ok := r.created.Load(client.ObjectKeyFromObject(p))
	if !ok || v.(createdSnapshot).parent != p.UID || v.(createdSnapshot).name != sp.Name {
		return ""
	}
	return v.(createdSnapshot).uid
}

// recallSnapshotUID records in st the uid recalledUID knows.
func (r *FlinkBlueGreenReconciler) recallSnapshotUID(p *v1alpha1.FlinkBlueGreenDeployment, st *v1alpha1.FlinkBlueGreenDeploymentStatus) {
	if uid := r.recalledUID(p, st); uid != "" {
		recordSnapshotUID(st, st.Savepoint.Name, uid)
	}
}

// withRecalledUID is p, or a copy of p whose status records the uid
// recalledUID knows, for observing the snapshot.
func (r *FlinkBlueGreenReconciler) withRecalledUID(p *v1alpha1.FlinkBlueGreenDeployment) *v1alpha1.FlinkBlueGreenDeployment {
	uid := r.recalledUID(p, &p.Status)
	if uid == "" {
		return p
	}
	q := *p
	recordSnapshotUID(&q.Status, p.Status.Savepoint.Name, uid)
	return &q
}

// recordSnapshotUID sets the uid of the savepoint st names, when it names
// the one called name. The savepoint is copied first: st may share it
// with the status as stored (a status written before the actions), which
// would then look unchanged and not be written.
func recordSnapshotUID(st *v1alpha1.FlinkBlueGreenDeploymentStatus, name string, uid types.UID) {
	if st.Savepoint == nil || st.Savepoint.Name != name {
		return
	}
	sp := *st.Savepoint
	sp.UID = uid
	st.Savepoint = &sp
}
