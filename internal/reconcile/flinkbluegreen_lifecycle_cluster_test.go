/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
)

// The state lifecycle as a cluster runs it: the control plane of this
// package runs kube-controller-manager's garbage collector and namespace
// controller, Git drives the deletion (a prune) and the re-creation (a
// revert), and Gitea holds the commit statuses.

// TestPruneKeepsTheJobsStateAndARevertRestoresIt: a commit that removes a
// stateful FlinkBlueGreenDeployment from Git prunes it only after a final
// savepoint; its children go; the revert of that commit applies it again
// and its first job starts from that savepoint, which the commit statuses
// of both commits report as success.
func TestPruneKeepsTheJobsStateAndARevertRestoresIt(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	forge, push := withForge(t, f, ns)
	const repoName = forgeRepoName
	sync, rollout := status.SyncContext(ns, "flink"), status.RolloutContext(ns, "job")

	withJob := map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
		"job.yaml":           fbgdManifest("flink:1.20.0", ""),
	}
	rev1 := push(withJob)
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
			Repository: forge.Repository(repoName), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
	})
	f.waitApplied(rev1)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ := child(ns, "job-blue")
	job := nested(blue, "status", "jobStatus", "jobId")

	// The commit that removes it: pruned after the final savepoint.
	rev2 := push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml")})
	f.requestReconcile()
	f.waitApplied(rev2)
	eventually(t, ns, "job pruned with its children", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "job"}, &v1alpha1.FlinkBlueGreenDeployment{})
		_, b := child(ns, "job-blue")
		return apierrors.IsNotFound(err) && !b
	})
	recs := records(t, ns, "job")
	require.Len(t, recs, 1, "the prune keeps one record")
	assert.Equal(t, "COMPLETED", nested(&recs[0], "status", "state"))
	assert.Equal(t, job, recs[0].GetAnnotations()[v1alpha1.JobIDAnnotation])
	waitForgeStatus(t, ns, forge, repoName, rev2, sync, "success", "applied to the cluster")

	// The revert: the same manifest again, restored from the record.
	rev3 := push(withJob)
	f.requestReconcile()
	f.waitApplied(rev3)
	eventually(t, ns, "ACTIVE_BLUE again", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ = child(ns, "job-blue")
	assert.Equal(t, nested(&recs[0], "status", "path"), nested(blue, "spec", "job", "initialSavepointPath"))
	assertRestoredFrom(t, blue, job)
	h := getFBGD(t, ns, "job").Status.History
	require.NotEmpty(t, h)
	assert.Equal(t, recs[0].GetName(), h[len(h)-1].Record)
	assert.Equal(t, rev3, h[len(h)-1].Revision)
	waitForgeStatus(t, ns, forge, repoName, rev3, rollout, "success", "job-blue active")
}

// TestOwnedChildrenOfAnObjectDeletedPastItsFinalizerAreCollected: with the
// finalizer gone (removed by hand, as an operator of the cluster may), the
// garbage collector deletes the children the FlinkBlueGreenDeployment
// owns; nothing of bg-gitops holds them.
func TestOwnedChildrenOfAnObjectDeletedPastItsFinalizerAreCollected(t *testing.T) {
	ns := newNamespace(t)
	stop := startController(t, ns)
	deployBlue(t, ns, "orders")
	stop()
	p := getFBGD(t, ns, "orders")
	base := p.DeepCopy()
	p.Finalizers = nil
	require.NoError(t, env.Client.Patch(t.Context(), p, client.MergeFrom(base)))
	require.NoError(t, env.Client.Delete(t.Context(), p))
	eventually(t, ns, "orders-blue collected", func() bool {
		_, ok := child(ns, "orders-blue")
		return !ok
	})
}

// TestNamespaceDeletionCompletesWithARunningStatefulJob: deleting the
// namespace of a running stateful job completes. The namespace controller
// deletes the children along with their parent, and a terminating
// namespace admits no new FlinkStateSnapshot, so no final savepoint can be
// taken there: the finalizer lets go at once rather than hold the
// namespace.
func TestNamespaceDeletionCompletesWithARunningStatefulJob(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	deployBlue(t, ns, "orders")
	require.NoError(t, env.Client.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return
		}
		require.NoError(t, err)
		if time.Now().After(deadline) {
			p := &v1alpha1.FlinkBlueGreenDeployment{}
			_ = env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "orders"}, p)
			t.Fatalf("namespace %s still exists; orders: finalizers %v, conditions %+v", ns, p.Finalizers, p.Status.Conditions)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRecreatedObjectWaitsForTheChildrenOfTheEarlierOne: a child of the
// deleted object still terminating (held here by a finalizer, as the
// Flink operator's cleanup holds it) belongs to no one the new object may
// adopt or start beside: the new object waits, saying so, and its first
// job starts from the record once the old child is gone.
func TestRecreatedObjectWaitsForTheChildrenOfTheEarlierOne(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	job := deployBlue(t, ns, "orders")
	const hold = "test.bggitops.dev/hold"
	blue, _ := child(ns, "orders-blue")
	blue.SetFinalizers(append(blue.GetFinalizers(), hold))
	require.NoError(t, env.Client.Update(t.Context(), blue))
	require.NoError(t, env.Client.Delete(t.Context(), getFBGD(t, ns, "orders")))
	eventually(t, ns, "orders gone", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "orders"}, &v1alpha1.FlinkBlueGreenDeployment{})
		return apierrors.IsNotFound(err)
	})

	require.NoError(t, env.Client.Create(t.Context(), fbgdObject(t, ns, "orders", 2, "flink:1.20.0", "")))
	eventually(t, ns, "waiting for the earlier child", func() bool {
		c := apimeta.FindStatusCondition(getFBGD(t, ns, "orders").Status.Conditions, v1alpha1.ReconcilingCondition)
		return c != nil && c.Reason == "WaitingForEarlierChildren"
	})
	old, ok := child(ns, "orders-blue")
	require.True(t, ok)
	assert.Equal(t, blue.GetUID(), old.GetUID(), "nothing applied to the earlier object's child")

	old.SetFinalizers(nil)
	require.NoError(t, env.Client.Update(t.Context(), old))
	eventually(t, ns, "ACTIVE_BLUE again", state(t, ns, "orders", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ = child(ns, "orders-blue")
	assertRestoredFrom(t, blue, job)
}

// TestForegroundDeletionLeavesARecordTheNextObjectHonours: with
// `kubectl delete --cascade=foreground` the garbage collector deletes the
// children while the final savepoint may still be asked for; whatever the
// race, a record is kept, and the next object of the name starts from
// its savepoint or, when it holds none, fails saying so: it never starts
// from empty state.
func TestForegroundDeletionLeavesARecordTheNextObjectHonours(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	deployBlue(t, ns, "orders")
	require.NoError(t, env.Client.Delete(t.Context(), getFBGD(t, ns, "orders"), client.PropagationPolicy(metav1.DeletePropagationForeground)))
	eventually(t, ns, "orders gone with its children", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "orders"}, &v1alpha1.FlinkBlueGreenDeployment{})
		_, b := child(ns, "orders-blue")
		return apierrors.IsNotFound(err) && !b
	})
	require.NotEmpty(t, records(t, ns, "orders"), "a foreground deletion keeps a record")

	require.NoError(t, env.Client.Create(t.Context(), fbgdObject(t, ns, "orders", 2, "flink:1.20.0", "")))
	eventually(t, ns, "restored, or failed for want of a savepoint", func() bool {
		if b, ok := child(ns, "orders-blue"); ok {
			require.NotEmpty(t, nested(b, "spec", "job", "initialSavepointPath"), "the next job starts from empty state")
			return true
		}
		st := getFBGD(t, ns, "orders").Status
		return st.JobStatus.State == v1alpha1.JobFailing && strings.Contains(st.Error, "holds no completed savepoint")
	})
}

// TestAForegroundDeletionSeenOnlyAfterItsChildrenAreGoneKeepsTheirState:
// the controller first sees a foreground deletion after the garbage
// collector has removed the children (it was down, or slow): it records
// the savepoint the status says the job started from, and the next object
// of the name starts from it.
func TestAForegroundDeletionSeenOnlyAfterItsChildrenAreGoneKeepsTheirState(t *testing.T) {
	ns := newNamespace(t)
	stop := startController(t, ns)
	deployBlue(t, ns, "orders")
	update(t, ns, "orders", 2, "flink:1.20.1", "")
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "orders", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ := child(ns, "orders-green")
	from := nested(green, "spec", "job", "initialSavepointPath")
	require.NotEmpty(t, from, "green started from blue's savepoint")
	eventually(t, ns, "blue gone", func() bool { _, b := child(ns, "orders-blue"); return !b })

	stop()
	require.NoError(t, env.Client.Delete(t.Context(), getFBGD(t, ns, "orders"), client.PropagationPolicy(metav1.DeletePropagationForeground)))
	eventually(t, ns, "green deleted by the garbage collector", func() bool { _, g := child(ns, "orders-green"); return !g })
	require.Contains(t, getFBGD(t, ns, "orders").Finalizers, v1alpha1.FinalSavepointFinalizer, "the object waits for the controller")

	startController(t, ns)
	eventually(t, ns, "orders gone", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "orders"}, &v1alpha1.FlinkBlueGreenDeployment{})
		return apierrors.IsNotFound(err)
	})
	recs := records(t, ns, "orders")
	require.Len(t, recs, 1, "a record is kept")
	require.NoError(t, env.Client.Create(t.Context(), fbgdObject(t, ns, "orders", 3, "flink:1.20.1", "")))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "orders", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blue, _ := child(ns, "orders-blue")
	assert.Equal(t, from, nested(blue, "spec", "job", "initialSavepointPath"), "the next job starts from the state green started from")
}
