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
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// TestGitRepositoryIsConfinedToItsNamespace: without
// --cluster-wide-namespaces, a GitRepository that points targetNamespace
// at another tenant's namespace applies nothing there, and says why.
func TestGitRepositoryIsConfinedToItsNamespace(t *testing.T) {
	ns, victim := newNamespace(t), newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true})
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.TargetNamespace = victim })
	c := f.waitCondition(v1alpha1.ApplyFailedCondition, "outside the GitRepository's namespace")
	assert.Contains(t, c.Message, "ConfigMap/"+victim+"/a")
	assert.Contains(t, c.Message, "--cluster-wide-namespaces")
	assert.False(t, configMapExists(victim, "a"), "nothing was written into the other namespace")
}

// TestClusterWideNamespaceMayApplyElsewhere: a namespace the admin lists
// may apply into others.
func TestClusterWideNamespaceMayApplyElsewhere(t *testing.T) {
	ns, other := newNamespace(t), newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true,
		Tenancy: reconcile.Tenancy{ClusterWideNamespaces: []string{ns}}})
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.TargetNamespace = other })
	f.waitApplied(rev)
	assert.True(t, configMapExists(other, "a"))
}

// TestASquattedNameLeavesOnlyItsNamespaceUnapplied: a cluster-wide
// GitRepository applying into two team namespaces, one of which created an
// object of the same name first, applies the other namespace's objects,
// names the squatted object, keeps its hands off it, and applies that
// namespace once the squatter deletes it.
func TestASquattedNameLeavesOnlyItsNamespaceUnapplied(t *testing.T) {
	ctx := context.Background()
	ns, teamA, teamB := newNamespace(t), newNamespace(t), newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true,
		Tenancy: reconcile.Tenancy{ClusterWideNamespaces: []string{ns}}})
	squatter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: teamB}, Data: map[string]string{"key": "mine"}}
	require.NoError(t, env.Client.Create(ctx, squatter))
	inNamespace := func(team, name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {key: platform}\n", name, team)
	}
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml, a2.yaml, b.yaml, b2.yaml"),
		"a.yaml": inNamespace(teamA, "settings"), "a2.yaml": inNamespace(teamA, "extra"),
		"b.yaml": inNamespace(teamB, "settings"), "b2.yaml": inNamespace(teamB, "extra")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.TargetNamespace = "" })

	c := f.waitCondition(v1alpha1.ApplyFailedCondition, "ConfigMap/"+teamB+"/settings")
	assert.Contains(t, c.Message, "not created by this GitRepository")
	assert.Contains(t, c.Message, "the other namespaces were applied")
	assert.True(t, configMapExists(teamA, "settings") && configMapExists(teamA, "extra"), "team-a's objects were applied")
	assert.False(t, configMapExists(teamB, "extra"), "nothing of team-b was applied")
	got := &corev1.ConfigMap{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(squatter), got))
	assert.Equal(t, "mine", got.Data["key"], "the squatted object was not taken over")
	assert.NotEqual(t, rev, f.get().Status.LastAppliedRevision, "the revision is not applied while a namespace is left out")

	require.NoError(t, env.Client.Delete(ctx, squatter))
	f.requestReconcile()
	f.waitApplied(rev)
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(squatter), got))
	assert.Equal(t, "platform", got.Data["key"])
	assert.True(t, configMapExists(teamB, "extra"))
}

// TestDefaultServiceAccountIsImpersonated: with --default-service-account,
// a GitRepository without serviceAccountName applies as that account of
// its own namespace, not as the controller.
func TestDefaultServiceAccountIsImpersonated(t *testing.T) {
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true,
		Tenancy: reconcile.Tenancy{DefaultServiceAccount: "tenant-applier"}})
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")
	c := f.waitCondition(v1alpha1.ApplyFailedCondition, "forbidden")
	assert.Contains(t, c.Message, "system:serviceaccount:"+ns+":tenant-applier")
	assert.False(t, configMapExists(ns, "a"))
}

// TestRequireServiceAccountStalls: with --require-service-account and no
// default, a GitRepository without serviceAccountName is Stalled and
// applies nothing with the controller's identity.
func TestRequireServiceAccountStalls(t *testing.T) {
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true,
		Tenancy: reconcile.Tenancy{RequireServiceAccount: true}})
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")
	c := f.waitCondition(v1alpha1.StalledCondition, "spec.serviceAccountName is required")
	assert.Equal(t, "ServiceAccountRequired", c.Reason)
	assert.False(t, configMapExists(ns, "a"))
}

// grant binds a Role with rules to ServiceAccount sa of ns.
func grant(t *testing.T, ns, sa, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules}))
	require.NoError(t, env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}}))
}

// TestChildrenAreCreatedWithTheApplyingIdentity: the FlinkDeployments of a
// FlinkBlueGreenDeployment are written as the ServiceAccount that applied
// it, not as the controller: an account that may create the parent but
// not FlinkDeployments gets a failed rollout naming it, and nothing runs.
func TestChildrenAreCreatedWithTheApplyingIdentity(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true})
	require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}}))
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	grant(t, ns, "deployer", "parents", rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"flinkbluegreendeployments"}, Verbs: all})
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"), "job.yaml": fbgdManifest("flink:1.20.0", "")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.ServiceAccountName = "deployer" })
	f.waitApplied(rev)

	eventually(t, ns, "rollout refused", func() bool {
		return strings.Contains(getFBGD(t, ns, "job").Status.Error, "system:serviceaccount:"+ns+":deployer")
	})
	_, ok := child(ns, "job-blue")
	assert.False(t, ok, "no child was created with the controller's identity")

	grant(t, ns, "deployer", "children", rbacv1.PolicyRule{APIGroups: []string{"flink.apache.org"},
		Resources: []string{"flinkdeployments", "flinkstatesnapshots"}, Verbs: all})
	annotate(t, ns, "job", v1alpha1.RetryRequestedAtAnnotation)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
}

// TestServiceAccountTokenIsNeverACredential: a GitRepository cannot send a
// ServiceAccount's token (a Secret of type service-account-token, which a
// tenant may create for any account of its namespace) to a git server.
func TestServiceAccountTokenIsNeverACredential(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true})
	require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "admin", Namespace: ns}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "admin-token", Namespace: ns, Annotations: map[string]string{corev1.ServiceAccountNameKey: "admin"}},
		Type:       corev1.SecretTypeServiceAccountToken,
		Data:       map[string][]byte{"token": []byte("the-admin-token")},
	}))
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.SecretRef.Name = "admin-token" })
	c := f.waitCondition(v1alpha1.FetchFailedCondition, "is a ServiceAccount token")
	assert.NotContains(t, c.Message, "the-admin-token")
	assert.Zero(t, f.srv.Listings(), "nothing was sent to the git server")
}

// TestHangingFetchesLeaveWorkersToOtherNamespaces: a tenant whose
// GitRepositories point at a server that never answers holds at most
// --concurrent-per-namespace workers (all but one by default), so another
// namespace's repository is still applied while the hanging fetches wait
// for their 5-minute timeout.
func TestHangingFetchesLeaveWorkersToOtherNamespaces(t *testing.T) {
	hostile, other := newNamespace(t), newNamespace(t)
	var inFlight, most atomic.Int32
	unblock := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		select {
		case <-unblock:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(unblock) })
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: hostile, Namespaces: []string{other},
		Controllers: &reconcile.Options{CacheDir: t.TempDir(), Concurrent: 2, AllowInsecureHTTP: true}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)

	for i := range 3 {
		require.NoError(t, env.Client.Create(context.Background(), &v1alpha1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hang-%d", i), Namespace: hostile},
			Spec: v1alpha1.GitRepositorySpec{URL: hang.URL + "/repo.git", Path: ".", TargetNamespace: hostile,
				Interval: &metav1.Duration{Duration: time.Hour}, Timeout: &metav1.Duration{Duration: 5 * time.Minute}},
		}))
	}
	eventually(t, hostile, "a hanging fetch", func() bool { return inFlight.Load() > 0 })

	f := newGitFixture(t, other)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")
	f.waitApplied(rev)
	assert.EqualValues(t, 1, most.Load(), "the hostile namespace held one of the two workers at most")
}

// TestAnAccountOutsideTheAllowListIsNeverUsed: a GitRepository that names
// a ServiceAccount the admin did not list is Stalled and applies nothing
// as it; a FlinkBlueGreenDeployment whose jobs would run as an unlisted
// account is refused before anything is applied, and one made by hand is
// never given children running as it.
func TestAnAccountOutsideTheAllowListIsNeverUsed(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true,
		Tenancy: reconcile.Tenancy{ApplierAccounts: []string{"bg-gitops-applier"}, FlinkAccounts: []string{"flink"}}})
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"),
		"job.yaml": strings.Replace(fbgdManifest("flink:1.20.0", ""), "flinkVersion: v1_20\n", "flinkVersion: v1_20\n      serviceAccount: ci-admin\n", 1)})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.ServiceAccountName = "ci-admin" })
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range f.get().Status.Conditions {
				t.Logf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
			}
		}
	})
	c := f.waitCondition(v1alpha1.StalledCondition, "--allowed-applier-accounts")
	assert.Equal(t, "ServiceAccountNotAllowed", c.Reason)
	assert.Contains(t, c.Message, "spec.serviceAccountName ci-admin")

	gr := f.get()
	gr.Spec.ServiceAccountName = ""
	require.NoError(t, env.Client.Update(ctx, gr))
	c = f.waitCondition(v1alpha1.ApplyFailedCondition, "--allowed-flink-accounts")
	assert.Contains(t, c.Message, `serviceAccount "ci-admin"`)
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job"}, &v1alpha1.FlinkBlueGreenDeployment{})
	assert.True(t, apierrors.IsNotFound(err), "nothing applied: %v", err)

	byHand := fbgdObject(t, ns, "by-hand", 1, "flink:1.20.0", "")
	byHand.Spec.Template.Spec.ServiceAccount = "ci-admin"
	require.NoError(t, env.Client.Create(ctx, byHand))
	eventually(t, ns, "the rollout refused", func() bool {
		return strings.Contains(getFBGD(t, ns, "by-hand").Status.Error, "--allowed-flink-accounts")
	})
	_, ok := child(ns, "by-hand-blue")
	assert.False(t, ok, "no job runs as an unlisted account")
}
