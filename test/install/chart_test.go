/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package install

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartRendersConfigDefault: `helm template` of the chart with its
// default values, into bg-gitops-system, gives exactly the objects of
// config/default, but for what Helm does differently by design: the
// Namespace is the release's (helm install --create-namespace), every
// object carries the chart's three labels, and the CRDs carry
// helm.sh/resource-policy: keep.
func TestChartRendersConfigDefault(t *testing.T) {
	assertChartRenders(t, configDefault(t), helmTemplate(t, installNamespace))
}

// TestChartRendersConfigReceiverWhenSeparate: with receiver.separate the
// chart renders exactly the objects of config/receiver (the receiver in a
// Deployment of its own, the controller serving no webhook, the Service
// following the receiver), with the same differences by design.
func TestChartRendersConfigReceiverWhenSeparate(t *testing.T) {
	assertChartRenders(t, configDir(t, "config/receiver"), helmTemplate(t, installNamespace, "receiver.separate=true"))
}

// TestChartReceiverValues: the receiver's replicas, resources and extra
// arguments are values of their own; the image and pod settings are the
// controller's.
func TestChartReceiverValues(t *testing.T) {
	objs := helmTemplate(t, installNamespace, "receiver.separate=true", "receiver.replicas=3",
		"receiver.extraArgs={--receiver-rate-limit=5}", "receiver.resources.limits.memory=512Mi",
		"image.tag=v9.9.9", "nodeSelector.pool=edge")
	d := find(t, objs, "Deployment", "bg-gitops-receiver")
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	assert.Equal(t, int64(3), replicas)
	pod, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	assert.Equal(t, map[string]any{"pool": "edge"}, pod["nodeSelector"])
	c := pod["containers"].([]any)[0].(map[string]any)
	assert.Equal(t, "bg-gitops:v9.9.9", c["image"])
	args := c["args"].([]any)
	assert.Equal(t, "--receiver-rate-limit=5", args[len(args)-1])
	assert.Equal(t, map[string]any{"memory": "512Mi"}, c["resources"].(map[string]any)["limits"])
}

// assertChartRenders: the chart rendered got exactly the objects of want,
// but for what Helm does differently by design.
func assertChartRenders(t *testing.T, objs, got []*unstructured.Unstructured) {
	t.Helper()
	want := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			assert.Equal(t, installNamespace, u.GetName())
			continue
		}
		want[key(u)] = u
	}
	require.NotEmpty(t, want)

	seen := map[string]bool{}
	for _, u := range got {
		k := key(u)
		seen[k] = true
		withoutHelmMetadata(t, u)
		w, ok := want[k]
		if !assert.True(t, ok, "the chart renders %s, which the kustomization does not have (run make chart)", k) {
			continue
		}
		assert.Equal(t, w.Object, u.Object, "%s differs from the kustomization (run make chart)", k)
	}
	for k := range want {
		assert.True(t, seen[k], "the kustomization has %s, the chart does not render it (run make chart)", k)
	}
}

// withoutHelmMetadata checks and removes the chart's labels and the CRDs'
// resource policy.
func withoutHelmMetadata(t *testing.T, u *unstructured.Unstructured) {
	k := key(u)
	labels := u.GetLabels()
	assert.True(t, strings.HasPrefix(labels["helm.sh/chart"], "bg-gitops-"), "%s: helm.sh/chart %q", k, labels["helm.sh/chart"])
	assert.Equal(t, "Helm", labels["app.kubernetes.io/managed-by"], k)
	assert.Equal(t, release, labels["app.kubernetes.io/instance"], k)
	for _, l := range []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"} {
		delete(labels, l)
	}
	if len(labels) == 0 {
		labels = nil
	}
	u.SetLabels(labels)
	if u.GetKind() == "CustomResourceDefinition" {
		a := u.GetAnnotations()
		assert.Equal(t, "keep", a["helm.sh/resource-policy"], "%s: helm uninstall must not delete it", k)
		delete(a, "helm.sh/resource-policy")
		if len(a) == 0 {
			a = nil
		}
		u.SetAnnotations(a)
	}
}

// TestChartValues: the values move the namespace, the image and the pod
// settings, add arguments, and leave the CRDs out; nothing else changes.
func TestChartValues(t *testing.T) {
	objs := helmTemplate(t, "platform",
		"image.repository=registry.example/flink/bg-gitops", "image.tag=v9.9.9", "image.pullPolicy=Always",
		"replicas=2", "extraArgs={--cluster-wide-namespaces=flink-system,--log-level=debug}",
		"imagePullSecrets[0].name=pull", "nodeSelector.pool=system", "crds.install=false",
		"resources.limits.memory=1Gi")
	defaults := helmTemplate(t, installNamespace)
	assert.Equal(t, len(defaults)-2, len(objs), "the same objects but the two CRDs")
	for _, u := range objs {
		assert.NotEqual(t, "CustomResourceDefinition", u.GetKind())
		if u.GetNamespace() != "" {
			assert.Equal(t, "platform", u.GetNamespace(), key(u))
		}
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for _, s := range subjects {
			assert.Equal(t, "platform", s.(map[string]any)["namespace"], key(u))
		}
	}
	c := controller(t, objs)
	assert.Equal(t, "registry.example/flink/bg-gitops:v9.9.9", c["image"])
	assert.Equal(t, "Always", c["imagePullPolicy"])
	args := c["args"].([]any)
	assert.Equal(t, []any{"--metrics-secure", "--cluster-wide-namespaces=flink-system", "--log-level=debug"}, args[len(args)-3:])
	assert.Equal(t, map[string]any{"limits": map[string]any{"memory": "1Gi"}, "requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
		c["resources"])
	d := find(t, objs, "Deployment", "bg-gitops-controller")
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	assert.Equal(t, int64(2), replicas)
	pod, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	assert.Equal(t, map[string]any{"pool": "system"}, pod["nodeSelector"])
	assert.Equal(t, []any{map[string]any{"name": "pull"}}, pod["imagePullSecrets"])
	assert.NotContains(t, pod, "tolerations")

	byDigest := controller(t, helmTemplate(t, installNamespace, "image.digest=sha256:0123456789abcdef"))
	assert.Equal(t, "bg-gitops@sha256:0123456789abcdef", byDigest["image"])
}

// TestConfigDefaultImage: config/default runs a versioned image that a node
// may already have (kind load docker-image, minikube image load), and the
// chart's default is the same image.
func TestConfigDefaultImage(t *testing.T) {
	c := controller(t, configDefault(t))
	image := c["image"].(string)
	assert.Regexp(t, `^bg-gitops:v[0-9]+\.[0-9]+\.[0-9]+`, image)
	assert.Equal(t, "IfNotPresent", c["imagePullPolicy"])
	assert.Equal(t, image, controller(t, helmTemplate(t, installNamespace))["image"])
}
