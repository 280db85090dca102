/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestMetricsScrapeConfig: config/prometheus scrapes what config/default
// serves. The PodMonitor selects the controller's pods, names its metrics
// port and scrapes over HTTPS (--metrics-secure) with the token of a
// ServiceAccount bound to the ClusterRole that may GET /metrics.
func TestMetricsScrapeConfig(t *testing.T) {
	installed, monitoring := kustomizeBuild(t, "../../config/default"), kustomizeBuild(t, "../../config/prometheus")
	deploy := findObject(t, installed, "Deployment", "bg-gitops-controller")
	pod := nestedMap(deploy.Object, "spec", "template")
	ctr := nestedSlice(pod, "spec", "containers")[0]
	assert.Contains(t, nestedStrings(ctr, "args"), "--metrics-secure")

	pm := findObject(t, monitoring, "PodMonitor", "bg-gitops")
	assert.Equal(t, deploy.GetNamespace(), pm.GetNamespace())
	for k, v := range nestedMap(pm.Object, "spec", "selector", "matchLabels") {
		assert.Equal(t, v, nestedMap(pod, "metadata", "labels")[k], "selector %s", k)
	}
	ep := nestedSlice(pm.Object, "spec", "podMetricsEndpoints")[0]
	var ports []any
	for _, p := range nestedSlice(ctr, "ports") {
		ports = append(ports, p["name"])
	}
	assert.Contains(t, ports, ep["port"])
	assert.Equal(t, "https", ep["scheme"])
	assert.Equal(t, true, ep["honorLabels"], "the series' namespace and name are the object's, not the pod's")

	secret := findObject(t, monitoring, "Secret", nestedMap(ep, "authorization", "credentials")["name"].(string))
	assert.Equal(t, "kubernetes.io/service-account-token", secret.Object["type"])
	account := secret.GetAnnotations()["kubernetes.io/service-account.name"]
	findObject(t, monitoring, "ServiceAccount", account)
	binding := findObject(t, monitoring, "ClusterRoleBinding", account)
	assert.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "name": account, "namespace": deploy.GetNamespace()}},
		binding.Object["subjects"])
	role := findObject(t, installed, "ClusterRole", nestedMap(binding.Object, "roleRef")["name"].(string))
	assert.Equal(t, []any{map[string]any{"nonResourceURLs": []any{"/metrics"}, "verbs": []any{"get"}}}, role.Object["rules"])
}

func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		require.NoError(t, err)
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

func findObject(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

func nestedMap(m map[string]any, path ...string) map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	out, _ := v.(map[string]any)
	return out
}

func nestedSlice(m map[string]any, path ...string) []map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if im, ok := it.(map[string]any); ok {
			out = append(out, im)
		}
	}
	return out
}

func nestedStrings(m map[string]any, path ...string) []string {
	v, _, _ := unstructured.NestedStringSlice(m, path...)
	return v
}
