/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
)

const gitIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %s
  annotations: {%s}
spec:
%s
`

func ingressRule(host string) string {
	return fmt.Sprintf(`  rules:
  - host: %q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: ui, port: {number: 80}}}}`, host)
}

// TestAnIngressFromGitKeepsToTheIngressPolicy: the account that applies a
// namespace opted in to Ingresses (to write its FlinkBlueGreenDeployments'
// Ingresses) may write any Ingress, so an Ingress of the applied set keeps
// to --ingress-host-pattern and --ingress-annotations as the one
// bg-gitops writes does: one with another namespace's host, a refused
// annotation, or a default backend (every host) is not applied.
func TestAnIngressFromGitKeepsToTheIngressPolicy(t *testing.T) {
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true, Tenancy: reconcile.Tenancy{
		Ingress: reconcile.IngressPolicy{HostPatterns: []string{"{{namespace}}.apps.example.com"},
			Annotations: []string{"nginx.ingress.kubernetes.io/rewrite-target"}}}})
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "foreign.yaml, snippet.yaml, catchall.yaml"),
		"foreign.yaml":       fmt.Sprintf(gitIngress, "foreign", "", ingressRule("grafana.team-other.apps.example.com")),
		"snippet.yaml": fmt.Sprintf(gitIngress, "snippet", `nginx.ingress.kubernetes.io/configuration-snippet: "return 200;"`,
			ingressRule(ns+".apps.example.com")),
		"catchall.yaml": fmt.Sprintf(gitIngress, "catchall", "", "  defaultBackend: {service: {name: ui, port: {number: 80}}}"),
	})
	f.create("s3cr3t-pass")
	eventually(t, ns, "the revision applied or refused", func() bool {
		gr := f.get()
		return gr.Status.LastAppliedRevision == rev || apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ApplyFailedCondition)
	})
	c := apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.ApplyFailedCondition)
	require.NotNil(t, c, "the revision was applied")
	assert.Contains(t, c.Message, "3 objects rejected")
	assert.Contains(t, c.Message, "grafana.team-other.apps.example.com")
	assert.Contains(t, c.Message, "nginx.ingress.kubernetes.io/configuration-snippet")
	assert.Contains(t, c.Message, "every host")
	for _, name := range []string{"foreign", "snippet", "catchall"} {
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &networkingv1.Ingress{})
		assert.True(t, apierrors.IsNotFound(err), "Ingress %s was not applied: %v", name, err)
	}

	rev = f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "own.yaml"),
		"own.yaml": fmt.Sprintf(gitIngress, "own", `nginx.ingress.kubernetes.io/rewrite-target: /`,
			ingressRule(ns+".apps.example.com")),
	})
	f.requestReconcile()
	f.waitApplied(rev)
	assert.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "own"}, &networkingv1.Ingress{}))
}

// TestAClusterWideGitRepositoryWritesTheIngressesItIsGiven: a GitRepository
// of a --cluster-wide-namespaces namespace is the platform's own; its
// Ingresses are not held to the tenants' Ingress policy.
func TestAClusterWideGitRepositoryWritesTheIngressesItIsGiven(t *testing.T) {
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true, Tenancy: reconcile.Tenancy{
		ClusterWideNamespaces: []string{ns},
		Ingress:               reconcile.IngressPolicy{HostPatterns: []string{"{{namespace}}.apps.example.com"}, Annotations: []string{}}}})
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "grafana.yaml"),
		"grafana.yaml": fmt.Sprintf(gitIngress, "grafana", `cert-manager.io/cluster-issuer: letsencrypt`,
			ingressRule("grafana.platform.example.com")),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev)
	assert.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "grafana"}, &networkingv1.Ingress{}))
}
