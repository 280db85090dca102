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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// denyStringCPU makes the API server refuse, in ns, a FlinkDeployment whose
// taskManager.resource.cpu is a string, as the Flink operator's own CRD
// (cpu: number) does. The test CRD leaves taskManager schemaless, so a
// ValidatingAdmissionPolicy stands in for that rule; it is refused in
// admission, like a denial of the operator's webhook. It returns once the
// policy is in force.
func denyStringCPU(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	inNS := &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-cpu-number"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"flink.apache.org"}, APIVersions: []string{"v1beta1"},
						Resources: []string{"flinkdeployments"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: `!has(object.spec.taskManager) || !has(object.spec.taskManager.resource) || ` +
					`!has(object.spec.taskManager.resource.cpu) || type(object.spec.taskManager.resource.cpu) != string`,
				Message: `spec.taskManager.resource.cpu: Invalid value: "string": must be of type number`,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, MatchResources: inNS,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	for _, o := range []client.Object{policy, binding} {
		require.NoError(t, env.Client.Create(ctx, o))
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
	probe := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"taskManager": map[string]any{"resource": map[string]any{"cpu": "1"}}}}}
	probe.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	probe.SetNamespace(ns)
	probe.SetGenerateName("probe-")
	require.Eventually(t, func() bool {
		return apierrors.IsInvalid(env.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll))
	}, waitFor, 100*time.Millisecond, "the admission policy never took effect")
}

func TestCommitWhoseChildWouldBeRejectedFailsTheSync(t *testing.T) {
	ns := newNamespace(t)
	denyStringCPU(t, ns)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
		"job.yaml":           fbgdManifest("flink:1.20.0", ""),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev1)
	before := getFBGD(t, ns, "job")
	settings := &corev1.ConfigMap{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "settings"}, settings))

	// The parent is valid, but its child's cpu is a string.
	rev2 := f.push(map[string]string{
		"settings.yaml": fmt.Sprintf(configMap, "settings", "v2"),
		"job.yaml":      withStringCPU("flink:1.20.1"),
	})
	f.requestReconcile()
	c := f.waitCondition(v1alpha1.ApplyFailedCondition, "spec.taskManager.resource.cpu")
	t.Logf("ApplyFailed: %s", c.Message)
	assert.Contains(t, c.Message, "FlinkBlueGreenDeployment/"+ns+"/job: its FlinkDeployment child would be rejected")
	assert.Contains(t, c.Message, "nothing applied")
	gr := f.get()
	ready := apimeta.FindStatusCondition(gr.Status.Conditions, v1alpha1.ReadyCondition)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionFalse, ready.Status)
	assert.Contains(t, ready.Message, "cpu")
	assert.Equal(t, rev1, gr.Status.LastAppliedRevision)
	assert.Equal(t, rev2, gr.Status.LastAttemptedRevision)

	// Nothing of the commit was applied; the good revision's objects are untouched.
	after := getFBGD(t, ns, "job")
	assert.Equal(t, before.Generation, after.Generation)
	assert.Equal(t, "flink:1.20.0", after.Spec.Template.Spec.Image)
	assert.Equal(t, rev1, after.Annotations[v1alpha1.RevisionAnnotation])
	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "settings"}, cm))
	assert.Equal(t, settings.ResourceVersion, cm.ResourceVersion)
	assert.Equal(t, "v1", cm.Data["key"])
	assertNoPreflightChild(t, ns)
}

// assertNoPreflightChild: the check's dry-run leaves no FlinkDeployment behind.
func assertNoPreflightChild(t *testing.T, ns string) {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
	for _, c := range list.Items {
		assert.NotContains(t, c.GetName(), "preflight")
	}
}

func withStringCPU(image string) string {
	return strings.Replace(fbgdManifest(image, ""),
		"taskManager: {resource: {memory: 1024m, cpu: 1}}", `taskManager: {resource: {memory: 1024m, cpu: "1"}}`, 1)
}

// TestChildCheckActsAsTheServiceAccount: the check asks as the identity of
// the apply. A ServiceAccount that may apply FlinkBlueGreenDeployments but
// not create FlinkDeployments (the controller creates those) cannot ask, so
// its commits are not held back by the check; once it may, they are.
func TestChildCheckActsAsTheServiceAccount(t *testing.T) {
	ns := newNamespace(t)
	denyStringCPU(t, ns)
	startController(t, ns)
	role := deployerRole(t, ns)
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"), "job.yaml": withStringCPU("flink:1.20.0")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.ServiceAccountName = "deployer" })
	f.waitApplied(rev1)

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"flink.apache.org"},
		Resources: []string{"flinkdeployments"}, Verbs: []string{"create"}})
	require.NoError(t, env.Client.Update(context.Background(), role))
	require.Eventually(t, func() bool { return deployerMay(t, ns, "create", "flink.apache.org", "flinkdeployments") },
		waitFor, 100*time.Millisecond)
	f.push(map[string]string{"job.yaml": withStringCPU("flink:1.20.1")})
	f.requestReconcile()
	c := f.waitCondition(v1alpha1.ApplyFailedCondition, "spec.taskManager.resource.cpu")
	assert.Contains(t, c.Message, "FlinkBlueGreenDeployment/"+ns+"/job: its FlinkDeployment child would be rejected")
	assert.Equal(t, "flink:1.20.0", getFBGD(t, ns, "job").Spec.Template.Spec.Image)
	assertNoPreflightChild(t, ns)
}

// deployerRole creates the ServiceAccount "deployer" that may manage
// FlinkBlueGreenDeployments in ns, and returns its Role.
func deployerRole(t *testing.T, ns string) *rbacv1.Role {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"flinkbluegreendeployments"},
			Verbs: []string{"get", "list", "create", "patch", "update", "delete"}}},
	}
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}},
		role,
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: ns}},
		},
	} {
		require.NoError(t, env.Client.Create(context.Background(), o))
	}
	return role
}

func deployerMay(t *testing.T, ns, verb, group, resource string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:serviceaccount:" + ns + ":deployer",
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource},
	}}
	require.NoError(t, env.Client.Create(context.Background(), sar))
	return sar.Status.Allowed
}
