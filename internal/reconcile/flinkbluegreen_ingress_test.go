/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
)

const ingressJSON = `{"template": "{{name}}.{{namespace}}.flink.example.com", "className": "nginx",
  "annotations": {"nginx.ingress.kubernetes.io/rewrite-target": "/"}, "labels": {"team": "orders"}}`

func withIngress(p *v1alpha1.FlinkBlueGreenDeployment) {
	p.Spec.Ingress = &apiextensionsv1.JSON{Raw: []byte(ingressJSON)}
}

func getIngress(ns, name string) (*networkingv1.Ingress, error) {
	ing := &networkingv1.Ingress{}
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, ing)
	return ing, err
}

// backend is the Service the parent Ingress sends traffic to, "" when
// there is no Ingress.
func backend(t *testing.T, ns string) string {
	t.Helper()
	ing, err := getIngress(ns, "job")
	if apierrors.IsNotFound(err) {
		return ""
	}
	require.NoError(t, err)
	require.Len(t, ing.Spec.Rules, 1)
	return ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name
}

// TestIngressFollowsTheActiveColour (FLIP-503 "ingress switches during
// transition" and "created only when configured"): the parent Ingress
// points at blue, still at blue while green starts, at green from the
// moment ACTIVE_GREEN is written, stays on green when the next transition
// aborts, is restored when deleted by hand, and goes away with
// spec.ingress.
func TestIngressFollowsTheActiveColour(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	withIngress(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	ing, err := getIngress(ns, "job")
	require.NoError(t, err)
	assert.Equal(t, "job-blue-rest", backend(t, ns))
	assert.Equal(t, "job."+ns+".flink.example.com", ing.Spec.Rules[0].Host)
	assert.Equal(t, "rest", ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Name, "the port the active colour serves, by name")
	assert.Equal(t, "nginx", *ing.Spec.IngressClassName)
	assert.Equal(t, map[string]string{"team": "orders", "component": "ingress"}, ing.Labels)
	assert.Equal(t, "/", ing.Annotations["nginx.ingress.kubernetes.io/rewrite-target"])
	owner := metav1.GetControllerOf(ing)
	require.NotNil(t, owner, "the FlinkBlueGreenDeployment controls its Ingress")
	assert.Equal(t, getFBGD(t, ns, "job").UID, owner.UID)

	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "3s"`, withIngress)
	eventually(t, ns, "green starting", state(t, ns, "job", v1alpha1.TransitioningToGreen, v1alpha1.JobReconciling))
	assert.Equal(t, "job-blue-rest", backend(t, ns), "no switch before the new colour is ready")
	eventually(t, ns, "ACTIVE_GREEN", func() bool { return getFBGD(t, ns, "job").Status.BlueGreenState == v1alpha1.ActiveGreen })
	assert.Equal(t, "job-green-rest", backend(t, ns), "switched by the time ACTIVE_GREEN is written")

	update(t, ns, "job", 3, "flink:1.20.2", neverReady, withIngress, withAbortGrace("2s"))
	eventually(t, ns, "the transition to blue aborted", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobFailing))
	assert.Equal(t, "job-green-rest", backend(t, ns), "an abort leaves the Ingress on the colour that keeps running")

	require.NoError(t, env.Client.Delete(context.Background(), ing))
	eventually(t, ns, "the Ingress restored", func() bool { return backend(t, ns) == "job-green-rest" })

	withoutAnnotation := func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Ingress = &apiextensionsv1.JSON{Raw: []byte(`{"template": "{{name}}.{{namespace}}.flink.example.com", "className": "nginx"}`)}
	}
	update(t, ns, "job", 4, "flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "3s"`, withoutAnnotation)
	eventually(t, ns, "an annotation removed from spec.ingress removed from the Ingress", func() bool {
		ing, err := getIngress(ns, "job")
		_, annotated := ing.Annotations["nginx.ingress.kubernetes.io/rewrite-target"]
		return err == nil && !annotated && ing.Labels["team"] == ""
	})

	update(t, ns, "job", 5, "flink:1.20.0", "")
	eventually(t, ns, "the Ingress gone with spec.ingress", func() bool { return backend(t, ns) == "" })
	assert.Nil(t, apimeta.FindStatusCondition(getFBGD(t, ns, "job").Status.Conditions, v1alpha1.IngressFailedCondition))
}

// TestIngressOfAnotherOwnerIsLeftAlone: an Ingress of the parent's name
// that the parent does not own is not taken over; IngressFailed says why.
func TestIngressOfAnotherOwnerIsLeftAlone(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	pathType := networkingv1.PathTypePrefix
	foreign := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: ns},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "other.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &pathType, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "other", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
	require.NoError(t, env.Client.Create(context.Background(), foreign))
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	withIngress(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "IngressFailed", func() bool {
		c := apimeta.FindStatusCondition(getFBGD(t, ns, "job").Status.Conditions, v1alpha1.IngressFailedCondition)
		return c != nil && c.Reason == "IngressNotOwned"
	})
	assert.Equal(t, v1alpha1.ActiveBlue, getFBGD(t, ns, "job").Status.BlueGreenState, "the rollout goes on")
	assert.Equal(t, "other", backend(t, ns), "the foreign Ingress is untouched")

	update(t, ns, "job", 2, "flink:1.20.0", "")
	eventually(t, ns, "without spec.ingress, nothing to report", func() bool {
		p := getFBGD(t, ns, "job")
		return p.Status.ObservedGeneration == p.Generation &&
			apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.IngressFailedCondition) == nil
	})
	assert.Equal(t, "other", backend(t, ns), "and the foreign Ingress is not deleted")
}

func withIngressJSON(spec string) func(*v1alpha1.FlinkBlueGreenDeployment) {
	return func(p *v1alpha1.FlinkBlueGreenDeployment) { p.Spec.Ingress = &apiextensionsv1.JSON{Raw: []byte(spec)} }
}

func ingressCondition(t *testing.T, ns string) *metav1.Condition {
	return apimeta.FindStatusCondition(getFBGD(t, ns, "job").Status.Conditions, v1alpha1.IngressFailedCondition)
}

// TestIngressHostOutsideThePlatformPatternIsNotWritten: with
// --ingress-host-pattern, an Ingress whose host is outside the pattern is
// not written, IngressFailed names the host and the pattern, and the job
// rolls out all the same; a host inside it is written.
func TestIngressHostOutsideThePlatformPatternIsNotWritten(t *testing.T) {
	ns := newNamespace(t)
	pattern := "{{namespace}}.apps.example.com"
	startControllerWithOptions(t, ns, reconcile.Options{Tenancy: reconcile.Tenancy{
		Ingress: reconcile.IngressPolicy{HostPatterns: []string{pattern}}}})
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	withIngressJSON(`{"template": "grafana.team-other.apps.example.com/{{name}}"}`)(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	eventually(t, ns, "IngressHostNotAllowed", func() bool {
		c := ingressCondition(t, ns)
		return c != nil && c.Reason == "IngressHostNotAllowed"
	})
	c := ingressCondition(t, ns)
	assert.Contains(t, c.Message, "grafana.team-other.apps.example.com")
	assert.Contains(t, c.Message, pattern)
	_, err := getIngress(ns, "job")
	assert.True(t, apierrors.IsNotFound(err), "no Ingress was written: %v", err)

	update(t, ns, "job", 1, "flink:1.20.0", "", withIngressJSON(`{"template": "{{namespace}}.apps.example.com/{{name}}"}`))
	eventually(t, ns, "the Ingress on the namespace's host", func() bool { return backend(t, ns) == "job-blue-rest" })
	ing, err := getIngress(ns, "job")
	require.NoError(t, err)
	assert.Equal(t, ns+".apps.example.com", ing.Spec.Rules[0].Host)
	eventually(t, ns, "IngressFailed cleared", func() bool { return ingressCondition(t, ns) == nil })
}

// TestIngressAnnotationsOutsideTheAllowListAreDropped: with
// --ingress-annotations, only the listed annotations of spec.ingress reach
// the Ingress; a warning names the others.
func TestIngressAnnotationsOutsideTheAllowListAreDropped(t *testing.T) {
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{Tenancy: reconcile.Tenancy{
		Ingress: reconcile.IngressPolicy{Annotations: []string{"nginx.ingress.kubernetes.io/rewrite-target", "cert-manager.io/"}}}})
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	withIngressJSON(`{"template": "{{name}}.{{namespace}}.flink.example.com", "annotations": {
	  "nginx.ingress.kubernetes.io/rewrite-target": "/", "cert-manager.io/cluster-issuer": "letsencrypt",
	  "nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers \"X: y\";"}}`)(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "the Ingress", func() bool { return backend(t, ns) == "job-blue-rest" })
	ing, err := getIngress(ns, "job")
	require.NoError(t, err)
	assert.Equal(t, "/", ing.Annotations["nginx.ingress.kubernetes.io/rewrite-target"])
	assert.Equal(t, "letsencrypt", ing.Annotations["cert-manager.io/cluster-issuer"], "a prefix allows its keys")
	assert.NotContains(t, ing.Annotations, "nginx.ingress.kubernetes.io/configuration-snippet")
	eventuallyWarned(t, ns, "job", "IngressAnnotationsDropped")
	assert.Nil(t, ingressCondition(t, ns), "the Ingress was written")
}

// shippedRules are the rules of a ClusterRole of config/rbac.
func shippedRules(t *testing.T, file string) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", file))
	require.NoError(t, err)
	role := &rbacv1.ClusterRole{}
	require.NoError(t, yaml.Unmarshal(data, role))
	return role.Rules
}

// TestIngressIsWrittenOnlyWhereThePlatformGrantsIt: the shipped applier
// role grants no Ingresses, so a tenant's FlinkBlueGreenDeployment rolls
// out without its Ingress and IngressFailed says how a platform opts the
// namespace in; with bg-gitops-ingress-applier bound, the Ingress is
// written.
func TestIngressIsWrittenOnlyWhereThePlatformGrantsIt(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true})
	require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bg-gitops-applier", Namespace: ns}}))
	grant(t, ns, "bg-gitops-applier", "applier", shippedRules(t, "applier_role.yaml")...)
	manifest := strings.Replace(fbgdManifest("flink:1.20.0", ""), "\nspec:\n",
		"\nspec:\n  ingress: {template: \"{{name}}.{{namespace}}.flink.example.com\"}\n", 1)
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"), "job.yaml": manifest})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.ServiceAccountName = "bg-gitops-applier" })
	f.waitApplied(rev)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	eventually(t, ns, "IngressRejected", func() bool {
		c := ingressCondition(t, ns)
		return c != nil && c.Reason == "IngressRejected"
	})
	c := ingressCondition(t, ns)
	assert.Contains(t, c.Message, "system:serviceaccount:"+ns+":bg-gitops-applier")
	assert.Contains(t, c.Message, "bg-gitops-ingress-applier", "the message says how a platform opts the namespace in")
	_, err := getIngress(ns, "job")
	assert.True(t, apierrors.IsNotFound(err), "no Ingress with the controller's identity: %v", err)

	grant(t, ns, "bg-gitops-applier", "ingress", shippedRules(t, "ingress_applier_role.yaml")...)
	annotate(t, ns, "job", v1alpha1.RetryRequestedAtAnnotation)
	eventually(t, ns, "the Ingress", func() bool { return backend(t, ns) == "job-blue-rest" })
}
