/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

const kustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [%s]
`

const configMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: %s}
data: {key: %q}
`

// gitFixture is a git repository served over smart HTTP with basic auth,
// plus a GitRepository pointing at it.
type gitFixture struct {
	t    *testing.T
	ns   string
	repo *gittest.Repo
	srv  *gittest.HTTPServer
}

func newGitFixture(t *testing.T, ns string) *gitFixture {
	gittest.Isolate(t)
	root := t.TempDir()
	f := &gitFixture{t: t, ns: ns, repo: gittest.NewRepo(t, root, "flink")}
	f.srv = gittest.ServeHTTP(t, root, gittest.HTTPOptions{Username: "git", Password: "s3cr3t-pass"})
	return f
}

// push commits files under deploy/ and pushes main; it returns the revision.
func (f *gitFixture) push(files map[string]string) string {
	prefixed := map[string]string{}
	for k, v := range files {
		prefixed["deploy/"+k] = v
	}
	sha := f.repo.Commit(prefixed, "change")
	f.repo.Push("main")
	return "main@sha1:" + sha
}

func (f *gitFixture) create(password string, mutate ...func(*v1alpha1.GitRepository)) {
	ctx := context.Background()
	require.NoError(f.t, env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-auth", Namespace: f.ns},
		StringData: map[string]string{"username": "git", "password": password},
	}))
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "flink", Namespace: f.ns},
		Spec: v1alpha1.GitRepositorySpec{
			URL: f.srv.URL + "/flink.git", Path: "./deploy", TargetNamespace: f.ns,
			SecretRef: &v1alpha1.LocalObjectReference{Name: "git-auth"},
			Interval:  &metav1.Duration{Duration: time.Hour},
		},
	}
	for _, m := range mutate {
		m(gr)
	}
	require.NoError(f.t, env.Client.Create(ctx, gr))
}

func (f *gitFixture) get() *v1alpha1.GitRepository {
	gr := &v1alpha1.GitRepository{}
	require.NoError(f.t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "flink"}, gr))
	reconciletest.CheckKstatus(f.t, gr)
	return gr
}

// requestReconcile is what a webhook or `bg-gitops reconcile` does.
func (f *gitFixture) requestReconcile() {
	gr := f.get()
	patch := client.MergeFrom(gr.DeepCopy())
	if gr.Annotations == nil {
		gr.Annotations = map[string]string{}
	}
	gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation] = time.Now().Format(time.RFC3339Nano)
	require.NoError(f.t, env.Client.Patch(context.Background(), gr, patch))
}

func (f *gitFixture) waitApplied(rev string) {
	eventually(f.t, f.ns, "applied "+rev, func() bool {
		gr := f.get()
		return gr.Status.LastAppliedRevision == rev && apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition)
	})
}

func (f *gitFixture) waitCondition(typ, contains string) *metav1.Condition {
	var c *metav1.Condition
	eventually(f.t, f.ns, typ, func() bool {
		c = apimeta.FindStatusCondition(f.get().Status.Conditions, typ)
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, contains)
	})
	return c
}

func fbgdManifest(image, extraConf string) string {
	return fmt.Sprintf(strings.Replace(fbgdTemplate, "  annotations: {bggitops.dev/revision: \"%s\"}\n", "", 1), "job", image, extraConf)
}

func configMapExists(ns, name string) bool {
	return env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &corev1.ConfigMap{}) == nil
}

func TestGitPushRollsOutAndBrokenCommitKeepsJobRunning(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
		"job.yaml":           fbgdManifest("flink:1.20.0", ""),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev1)
	gr := f.get()
	assert.Equal(t, rev1, gr.Status.Artifact.Revision)
	assert.Len(t, gr.Status.Inventory.Entries, 2)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	p := getFBGD(t, ns, "job")
	assert.Equal(t, rev1, p.Annotations[v1alpha1.RevisionAnnotation])
	assert.Equal(t, ns+"/flink", p.Annotations[v1alpha1.SourceAnnotation])
	assert.Equal(t, rev1, p.Status.ActiveRevision)
	blue, _ := child(ns, "job-blue")
	blueJob := nested(blue, "status", "jobStatus", "jobId")

	// A new image is rolled out blue/green from a savepoint.
	rev2 := f.push(map[string]string{"job.yaml": fbgdManifest("flink:1.20.1", "")})
	f.requestReconcile()
	f.waitApplied(rev2)
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	assert.Equal(t, rev2, getFBGD(t, ns, "job").Status.ActiveRevision)
	green, _ := child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)
	assert.Equal(t, f.get().Status.LastHandledReconcileAt, f.get().Annotations[v1alpha1.ReconcileRequestedAtAnnotation])

	// A broken commit: nothing applied, the job keeps running.
	rev3 := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml, missing.yaml")})
	f.requestReconcile()
	c := f.waitCondition(v1alpha1.BuildFailedCondition, "missing.yaml")
	assert.Contains(t, c.Message, "kustomize build failed")
	gr = f.get()
	assert.Equal(t, rev2, gr.Status.LastAppliedRevision)
	assert.Equal(t, rev3, gr.Status.Artifact.Revision)
	assert.False(t, apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition))
	assert.Equal(t, v1alpha1.ActiveGreen, getFBGD(t, ns, "job").Status.BlueGreenState)

	// One object the API server rejects among valid ones: nothing applied.
	rev4 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v2"),
		"job.yaml":           strings.Replace(fbgdManifest("flink:1.20.2", ""), "upgradeMode: savepoint", "upgradeMode: SAVEPOINT", 1),
	})
	f.requestReconcile()
	c = f.waitCondition(v1alpha1.ApplyFailedCondition, "FlinkBlueGreenDeployment")
	assert.Contains(t, c.Message, "SAVEPOINT")
	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "settings"}, cm))
	assert.Equal(t, "v1", cm.Data["key"], "the valid ConfigMap was not applied either")
	assert.Equal(t, "flink:1.20.1", getFBGD(t, ns, "job").Spec.Template.Spec.Image)
	assert.Equal(t, rev2, f.get().Status.LastAppliedRevision)

	// The fix is applied and Ready again.
	rev5 := f.push(map[string]string{"job.yaml": fbgdManifest("flink:1.20.1", "")})
	f.requestReconcile()
	f.waitApplied(rev5)
	assert.NotEqual(t, rev4, rev5)
	assert.Nil(t, apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.ApplyFailedCondition))
}

func TestNoOpPollDoesNotFetchAndPruneRemovesDeletedObjects(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml, b.yaml"),
		"a.yaml":             fmt.Sprintf(configMap, "a", "1"),
		"b.yaml":             fmt.Sprintf(configMap, "b", "1"),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev1)
	packs := f.srv.UploadPacks()
	lists := f.srv.Listings()

	f.requestReconcile()
	eventually(t, ns, "request handled", func() bool {
		gr := f.get()
		return gr.Status.LastHandledReconcileAt == gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
	})
	assert.Greater(t, f.srv.Listings(), lists, "the poll listed the remote refs")
	assert.Equal(t, packs, f.srv.UploadPacks(), "an unchanged ref is not fetched again")

	rev2 := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml")})
	f.requestReconcile()
	f.waitApplied(rev2)
	assert.True(t, configMapExists(ns, "a"))
	assert.False(t, configMapExists(ns, "b"), "b was removed from Git and pruned")
	assert.Len(t, f.get().Status.Inventory.Entries, 1)
}

func TestFetchFailuresHaveActionableMessages(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("wrong-password")
	c := f.waitCondition(v1alpha1.FetchFailedCondition, "")
	assert.Equal(t, "AuthenticationFailed", c.Reason)
	// What to fix and where: the credentials, in the Secret the spec names.
	assert.Contains(t, c.Message, "authentication failed for "+f.srv.URL+"/flink.git")
	assert.Contains(t, c.Message, "check the username/password or bearerToken in")
	assert.Contains(t, c.Message, "git-auth")
	assert.NotContains(t, c.Message, "wrong-password")
	assert.NotContains(t, c.Message, "s3cr3t-pass")
	ready := apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.ReadyCondition)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionFalse, ready.Status)
}

func TestInvalidScheduleStalls(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.Interval = nil
		gr.Spec.Schedule = "every tuesday"
	})
	f.waitCondition(v1alpha1.StalledCondition, "every tuesday")
	assert.False(t, configMapExists(ns, "a"), "nothing is applied while the schedule is invalid")
}

// TestWrongForgeTokenIsACondition: commit statuses that the forge refuses
// show as CommitStatusFailed on the GitRepository, without the token, and
// do not stop the apply.
func TestWrongForgeTokenIsACondition(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	forge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Bad credentials"}`))
	}))
	defer forge.Close()
	const token = "ghp_thisTokenMustNeverShow"
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: ns}, StringData: map[string]string{"token": token}}))
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "github", Address: forge.URL, Repository: "org/flink",
			SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
	})
	f.waitApplied(rev)
	c := f.waitCondition(v1alpha1.CommitStatusFailedCondition, "")
	assert.Equal(t, "Unauthorized", c.Reason)
	assert.NotContains(t, c.Message, token)
	t.Logf("wrong token: %s", c.Message)
}
