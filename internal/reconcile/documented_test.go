/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// Documented behaviour of the GitRepository and of the request
// annotations (docs/cli.md "Good to know", docs/design.md), proved through the
// reconcilers against the API server.

// startControllerWithCache is startController with a checkout directory
// the test can look into.
func startControllerWithCache(t *testing.T, ns, cacheDir string) {
	t.Helper()
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: ns,
		Controllers: &reconcile.Options{CacheDir: cacheDir, Concurrent: 2, AllowInsecureHTTP: true}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)
}

func getConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cm))
	return cm
}

// patchSpec merge-patches the GitRepository's spec and returns the new
// generation.
func (f *gitFixture) patchSpec(mutate func(*v1alpha1.GitRepository)) int64 {
	f.t.Helper()
	gr := f.get()
	patch := client.MergeFrom(gr.DeepCopy())
	mutate(gr)
	require.NoError(f.t, env.Client.Patch(context.Background(), gr, patch))
	return gr.Generation
}

func (f *gitFixture) waitObserved(gen int64) {
	f.t.Helper()
	eventually(f.t, f.ns, fmt.Sprintf("observedGeneration %d", gen), func() bool {
		return f.get().Status.ObservedGeneration >= gen
	})
}

// eventNotes returns the notes of the events of one reason about obj.
func eventNotes(t *testing.T, ns, kind, name, reason string) []string {
	t.Helper()
	evs := &eventsv1.EventList{}
	require.NoError(t, env.Client.List(context.Background(), evs, client.InNamespace(ns)))
	var out []string
	for _, e := range evs.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// TestDeletingAGitRepositoryLeavesWhatItApplied:
// docs/spec/v1alpha1/gitrepositories.md "Deleting a GitRepository leaves
// what it applied in place (a running job is never taken down by removing
// its source)". The GitRepository carries no
// finalizer, so it is gone at once; the controller then forgets it (its
// checkout is removed, the fact this test waits for) and prunes nothing:
// the ConfigMap, the FlinkBlueGreenDeployment and its running child stay,
// and the FlinkBlueGreenDeployment is still managed without its source.
func TestDeletingAGitRepositoryLeavesWhatItApplied(t *testing.T) {
	ns := newNamespace(t)
	cache := t.TempDir()
	startControllerWithCache(t, ns, cache)
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
		"job.yaml":           fbgdManifest("flink:1.20.0", ""),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blueJob := jobIDOf(ns, "job-blue")
	dirs := sharedDirs(t, cache, ns)
	require.Len(t, dirs, 1, "the controller keeps a checkout of the repository")
	checkout := filepath.Join(cache, ns, dirs[0])
	gr := f.get()
	assert.Empty(t, gr.Finalizers, "a GitRepository holds no finalizer: nothing is cleaned up on deletion")

	require.NoError(t, env.Client.Delete(context.Background(), gr))
	eventually(t, ns, "GitRepository gone", func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(gr), &v1alpha1.GitRepository{}))
	})
	eventually(t, ns, "the controller handled the deletion (checkout removed)", func() bool {
		_, err := os.Stat(checkout)
		return os.IsNotExist(err)
	})

	cm := getConfigMap(t, ns, "settings")
	assert.Nil(t, cm.DeletionTimestamp)
	assert.Equal(t, "v1", cm.Data["key"])
	p := getFBGD(t, ns, "job")
	assert.Nil(t, p.DeletionTimestamp, "the FlinkBlueGreenDeployment is not deleted with its source")
	assert.Equal(t, ns+"/flink", p.Annotations[v1alpha1.SourceAnnotation])
	assert.Equal(t, v1alpha1.ActiveBlue, p.Status.BlueGreenState)
	assert.Equal(t, v1alpha1.JobRunning, p.Status.JobStatus.State)
	assert.Equal(t, "RUNNING", jobStateOf(ns, "job-blue"))
	assert.Equal(t, blueJob, jobIDOf(ns, "job-blue"), "the running job was never restarted")

	// Without its source the FlinkBlueGreenDeployment is still rolled out
	// (no rollout window, no commit status to look up).
	update(t, ns, "job", 2, "flink:1.20.1", "")
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ := child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)
}

func jobIDOf(ns, name string) string {
	c, _ := child(ns, name)
	return nested(c, "status", "jobStatus", "jobId")
}

func jobStateOf(ns, name string) string {
	c, ok := child(ns, name)
	if !ok {
		return "absent"
	}
	return nested(c, "status", "jobStatus", "state")
}

// TestPruneFalseKeepsObjectsRemovedFromGit: with spec.prune false an
// object removed from Git stays in the cluster as it was; it leaves the
// inventory (the GitRepository no longer manages it) and the Applied event
// says it was left ("skipped: prune disabled").
func TestPruneFalseKeepsObjectsRemovedFromGit(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml, b.yaml"),
		"a.yaml":             fmt.Sprintf(configMap, "a", "1"),
		"b.yaml":             fmt.Sprintf(configMap, "b", "1"),
	})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		no := false
		gr.Spec.Prune = &no
	})
	f.waitApplied(rev1)
	require.Len(t, f.get().Status.Inventory.Entries, 2)
	b := getConfigMap(t, ns, "b")

	rev2 := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml")})
	f.requestReconcile()
	f.waitApplied(rev2)

	left := getConfigMap(t, ns, "b")
	assert.Nil(t, left.DeletionTimestamp, "b was removed from Git and kept")
	assert.Equal(t, b.UID, left.UID)
	assert.Equal(t, b.ResourceVersion, left.ResourceVersion, "b is left exactly as it was")
	assert.True(t, configMapExists(ns, "a"))
	inv := f.get().Status.Inventory
	require.Len(t, inv.Entries, 1, "b left the inventory: it is no longer managed")
	assert.Contains(t, inv.Entries[0].ID, "_a_")
	want := fmt.Sprintf("applied revision %s: 1 configured, 1 skipped: prune disabled", rev2)
	eventually(t, ns, "Applied event of "+rev2, func() bool {
		for _, n := range eventNotes(t, ns, "GitRepository", "flink", "Applied") {
			if n == want {
				return true
			}
		}
		return false
	})
}

// TestSuspendSpecFieldStopsFetchAndApply: spec.suspend (not only the
// annotation) stops fetching and applying; a reconcile request made while
// suspended waits, and resuming fetches and applies the new commit and
// acknowledges the request.
func TestSuspendSpecFieldStopsFetchAndApply(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev1)

	f.waitObserved(f.patchSpec(func(gr *v1alpha1.GitRepository) { gr.Spec.Suspend = true }))
	assert.True(t, f.get().Status.Suspended, "status.suspended (kubectl get's SUSPENDED column)")
	lists, packs := f.srv.Listings(), f.srv.UploadPacks()

	rev2 := f.push(map[string]string{"settings.yaml": fmt.Sprintf(configMap, "settings", "v2")})
	f.requestReconcile()
	requested := f.get().Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
	// A spec change after the request: once it is observed, a reconcile
	// has seen the request while suspended.
	f.waitObserved(f.patchSpec(func(gr *v1alpha1.GitRepository) { gr.Spec.Timeout = &metav1.Duration{Duration: 61 * time.Second} }))

	gr := f.get()
	ready := apimeta.FindStatusCondition(gr.Status.Conditions, v1alpha1.ReadyCondition)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionFalse, ready.Status, "kubectl get shows a suspended GitRepository as not ready")
	assert.Equal(t, "Suspended", ready.Reason)
	assert.Contains(t, ready.Message, "bg-gitops resume gitrepository flink -n "+ns)
	assert.Equal(t, lists, f.srv.Listings(), "a suspended GitRepository does not list the remote")
	assert.Equal(t, packs, f.srv.UploadPacks(), "nor fetch")
	assert.Equal(t, rev1, gr.Status.Artifact.Revision)
	assert.Equal(t, rev1, gr.Status.LastAppliedRevision)
	assert.Equal(t, rev1, gr.Status.LastAttemptedRevision)
	assert.NotEqual(t, requested, gr.Status.LastHandledReconcileAt, "the request waits for the resume")
	assert.Equal(t, "v1", getConfigMap(t, ns, "settings").Data["key"], "nothing applied while suspended")

	f.patchSpec(func(gr *v1alpha1.GitRepository) { gr.Spec.Suspend = false })
	f.waitApplied(rev2)
	assert.False(t, f.get().Status.Suspended, "resumed: status.suspended is false")
	assert.Equal(t, "v2", getConfigMap(t, ns, "settings").Data["key"])
	assert.Greater(t, f.srv.UploadPacks(), packs, "the resumed GitRepository fetched the new commit")
	assert.Equal(t, requested, f.get().Status.LastHandledReconcileAt, "the waiting request is acknowledged")
}

// TestServiceAccountNameImpersonatesTheApply: apply impersonates
// spec.serviceAccountName. Without rights the GitRepository is not Ready,
// the message names the refused identity, and nothing is applied; once the
// ServiceAccount may, the same commit is applied.
func TestServiceAccountNameImpersonatesTheApply(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}}))
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml, b.yaml"),
		"a.yaml":             fmt.Sprintf(configMap, "a", "1"),
		"b.yaml":             fmt.Sprintf(configMap, "b", "1"),
	})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.ServiceAccountName = "deployer" })

	user := "system:serviceaccount:" + ns + ":deployer"
	c := f.waitCondition(v1alpha1.ApplyFailedCondition, user)
	assert.Contains(t, c.Message, "forbidden")
	gr := f.get()
	ready := apimeta.FindStatusCondition(gr.Status.Conditions, v1alpha1.ReadyCondition)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionFalse, ready.Status)
	assert.Contains(t, ready.Message, "forbidden")
	assert.Contains(t, ready.Message, user)
	assert.Empty(t, gr.Status.LastAppliedRevision)
	assert.Equal(t, rev, gr.Status.LastAttemptedRevision)
	assert.False(t, configMapExists(ns, "a"), "nothing applied")
	assert.False(t, configMapExists(ns, "b"), "nothing applied")

	for _, o := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmaps", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				Verbs: []string{"get", "list", "create", "patch", "update", "delete"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmaps"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: ns}}},
	} {
		require.NoError(t, env.Client.Create(ctx, o))
	}
	require.Eventually(t, func() bool { return deployerMay(t, ns, "patch", "", "configmaps") }, waitFor, 100*time.Millisecond)
	f.requestReconcile()
	f.waitApplied(rev)
	assert.Nil(t, apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.ApplyFailedCondition))
	for _, name := range []string{"a", "b"} {
		cm := getConfigMap(t, ns, name)
		assert.Equal(t, rev, cm.Annotations[v1alpha1.RevisionAnnotation])
		assert.Equal(t, ns+"/flink", cm.Annotations[v1alpha1.SourceAnnotation])
	}
}

// manualManifest is a FlinkBlueGreenDeployment manifest with manual
// promotion and the given deletion delay.
func manualManifest(image, deletionDelay string) string {
	m := strings.Replace(fbgdManifest(image, ""), "  configuration:\n",
		"  configuration:\n    "+v1alpha1.DeploymentDeletionDelayKey+": \""+deletionDelay+"\"\n", 1)
	return m + "  promotion: {mode: Manual}\n"
}

// annotateAs merge-patches one annotation as `kubectl annotate` does (its
// own field manager, an Update operation in managedFields).
func annotateAs(t *testing.T, obj client.Object, key, value string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	require.NoError(t, err)
	require.NoError(t, env.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, body),
		client.FieldOwner("kubectl-annotate")))
}

func reconcilingReason(t *testing.T, ns, name string) string {
	c := apimeta.FindStatusCondition(getFBGD(t, ns, name).Status.Conditions, v1alpha1.ReconcilingCondition)
	if c == nil || c.Status != metav1.ConditionTrue {
		return ""
	}
	return c.Reason
}

// TestRequestAnnotationSurvivesApplyFromGit: docs/cli.md "a later apply
// from Git does not undo them". A promotion requested with a merge patch is
// still pending (the new colour waits out a one-hour deletion delay, and a
// promotion is acknowledged at the cut-over) while two new commits are
// applied with server-side apply: the annotation stays, and the second
// commit, which shortens the delay, lets the same request cut over.
func TestRequestAnnotationSurvivesApplyFromGit(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
		"job.yaml":           manualManifest("flink:1.20.0", "1h"),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev1)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	blueJob := jobIDOf(ns, "job-blue")

	rev2 := f.push(map[string]string{"job.yaml": manualManifest("flink:1.20.1", "1h")})
	f.requestReconcile()
	f.waitApplied(rev2)
	eventually(t, ns, "waiting for promotion", func() bool { return reconcilingReason(t, ns, "job") == "WaitingForPromotion" })

	const token = "2026-07-21T10:00:00Z"
	annotateAs(t, getFBGD(t, ns, "job"), v1alpha1.PromoteRequestedAtAnnotation, token)
	eventually(t, ns, "promotion seen, waiting for the deletion delay", func() bool {
		return reconcilingReason(t, ns, "job") == "WaitingForDeletionDelay"
	})

	// A commit that changes only the ConfigMap: the FlinkBlueGreenDeployment
	// is applied again with the new revision stamped on it.
	rev3 := f.push(map[string]string{"settings.yaml": fmt.Sprintf(configMap, "settings", "v2")})
	f.requestReconcile()
	f.waitApplied(rev3)
	p := getFBGD(t, ns, "job")
	assert.Equal(t, rev3, p.Annotations[v1alpha1.RevisionAnnotation], "the apply rewrote the annotations it owns")
	assert.Equal(t, token, p.Annotations[v1alpha1.PromoteRequestedAtAnnotation], "and kept the request")
	assert.Equal(t, "kubectl-annotate", annotationManager(p, v1alpha1.PromoteRequestedAtAnnotation))
	assert.Equal(t, objects.FieldManager, annotationManager(p, v1alpha1.RevisionAnnotation))
	assert.Equal(t, v1alpha1.TransitioningToGreen, p.Status.BlueGreenState)
	assert.NotEqual(t, token, p.Status.LastHandledPromoteAt, "the request is still pending")

	rev4 := f.push(map[string]string{"job.yaml": manualManifest("flink:1.20.1", "0")})
	f.requestReconcile()
	f.waitApplied(rev4)
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	p = getFBGD(t, ns, "job")
	assert.Equal(t, token, p.Status.LastHandledPromoteAt, "the request that survived both applies was handled")
	assert.Equal(t, token, p.Annotations[v1alpha1.PromoteRequestedAtAnnotation])
	assert.Equal(t, rev2, p.Status.ActiveRevision)
	green, _ := child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)
	eventually(t, ns, "blue deleted", func() bool { _, ok := child(ns, "job-blue"); return !ok })
}

// annotationManager is the field manager that owns an annotation.
func annotationManager(obj metav1.Object, key string) string {
	want := `"f:` + key + `"`
	for _, mf := range obj.GetManagedFields() {
		if mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), want) {
			return mf.Manager
		}
	}
	return ""
}
