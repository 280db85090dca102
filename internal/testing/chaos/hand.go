/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// hand.go: the faults of an operator by hand: deleteChild, deleteSnapshot
// and wipeStatus.

package chaos

import (
	"context"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// The faults of an operator in a hurry: a child, a snapshot or a parent's
// status removed by hand. Pick chooses among what exists, sorted by name.

// waitForRollout waits up to timeout until a rollout is in progress, so
// that the next fault hits one.
func (n *nemesis) waitForRollout(ctx context.Context, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		list := &v1alpha1.FlinkBlueGreenDeploymentList{}
		if err := n.e.c.List(ctx, list); err == nil {
			for _, p := range list.Items {
				if p.Status.BlueGreenState.InProgress() {
					n.tl.logf(global, "rollout in progress: %s/%s %s", p.Namespace, p.Name, p.Status.BlueGreenState)
					return
				}
			}
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return
		}
	}
	n.tl.logf(global, "no rollout in progress within %s", timeout)
}

func (n *nemesis) listFlink(ctx context.Context, kind string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	gvk := v1alpha1.FlinkDeploymentGVK
	if kind == "snapshot" {
		gvk = v1alpha1.FlinkStateSnapshotGVK
	}
	list.SetGroupVersionKind(gvk)
	if err := n.e.c.List(ctx, list); err != nil {
		return nil, err
	}
	items := list.Items
	sort.Slice(items, func(a, b int) bool {
		return items[a].GetNamespace()+"/"+items[a].GetName() < items[b].GetNamespace()+"/"+items[b].GetName()
	})
	return items, nil
}

func (n *nemesis) deleteChild(ctx context.Context, pick uint32) error {
	items, err := n.listFlink(ctx, "child")
	if err != nil || len(items) == 0 {
		return fmt.Errorf("no FlinkDeployment to delete: %v", err)
	}
	u := &items[int(pick)%len(items)]
	// Recorded before it is done: the simulator's journal may show the
	// stopped job before Delete returns.
	n.mu.Lock()
	n.deletions = append(n.deletions, handDeletion{namespace: u.GetNamespace(), name: u.GetName(), at: time.Now()})
	n.mu.Unlock()
	if err := n.e.c.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
		return err
	}
	n.tl.logf([]string{jobKeyOfChild(u.GetNamespace(), u.GetName())}, "by hand: deleted FlinkDeployment %s/%s", u.GetNamespace(), u.GetName())
	return nil
}

// deleteSnapshot deletes a snapshot in progress when there is one (the
// one that matters), else any.
func (n *nemesis) deleteSnapshot(ctx context.Context, pick uint32) error {
	items, err := n.listFlink(ctx, "snapshot")
	if err != nil || len(items) == 0 {
		return fmt.Errorf("no FlinkStateSnapshot to delete: %v", err)
	}
	var open []unstructured.Unstructured
	for _, u := range items {
		if s, _, _ := unstructured.NestedString(u.Object, "status", "state"); s != "COMPLETED" && s != "FAILED" && s != "ABANDONED" {
			open = append(open, u)
		}
	}
	if len(open) > 0 {
		items = open
	}
	u := &items[int(pick)%len(items)]
	if err := n.e.c.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
		return err
	}
	job, _, _ := unstructured.NestedString(u.Object, "spec", "jobReference", "name")
	n.tl.logf([]string{jobKeyOfChild(u.GetNamespace(), job)}, "by hand: deleted FlinkStateSnapshot %s/%s (of %s)", u.GetNamespace(), u.GetName(), job)
	return nil
}

// wipeStatus empties a FlinkBlueGreenDeployment's status.
func (n *nemesis) wipeStatus(ctx context.Context, pick uint32) error {
	list := &v1alpha1.FlinkBlueGreenDeploymentList{}
	if err := n.e.c.List(ctx, list); err != nil || len(list.Items) == 0 {
		return fmt.Errorf("no FlinkBlueGreenDeployment: %v", err)
	}
	items := list.Items
	sort.Slice(items, func(a, b int) bool { return items[a].Namespace+items[a].Name < items[b].Namespace+items[b].Name })
	key := client.ObjectKeyFromObject(&items[int(pick)%len(items)])
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &v1alpha1.FlinkBlueGreenDeployment{}
		if err := n.e.c.Get(ctx, key, p); err != nil {
			return err
		}
		p.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{}
		return n.e.c.Status().Update(ctx, p)
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.wipes = append(n.wipes, handDeletion{namespace: key.Namespace, name: key.Name, at: time.Now()})
	n.mu.Unlock()
	n.tl.logf([]string{key.String()}, "by hand: wiped the status of %s", key)
	return nil
}

// jobKeyOfChild is the namespace/name of the job a child belongs to.
func jobKeyOfChild(namespace, child string) string {
	return namespace + "/" + jobOfChild(child)
}

func jobOfChild(child string) string {
	for _, suffix := range []string{"-blue", "-green"} {
		if len(child) > len(suffix) && child[len(child)-len(suffix):] == suffix {
			return child[:len(child)-len(suffix)]
		}
	}
	return child
}
