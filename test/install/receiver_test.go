/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package install

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/render"
)

// TestConfigReceiverSplitsOffTheReceiver: config/receiver is config/default
// with the webhook receiver in a Deployment of its own, running the
// controller's image with --receiver-only; the controller serves no
// webhook, and the receiver's Service sends webhooks to the receiver's
// pods only.
func TestConfigReceiverSplitsOffTheReceiver(t *testing.T) {
	objs, err := render.Build(root, "config/receiver", render.Options{})
	require.NoError(t, err)
	var rendered []*unstructured.Unstructured
	for _, u := range objs {
		rendered = append(rendered, normalize(t, u.Object))
	}
	ctrl := controller(t, rendered)
	assert.Contains(t, ctrl["args"], "--receiver-bind-address=0")
	assert.NotContains(t, ctrl["args"], "--receiver-bind-address=:9292")

	recv := find(t, rendered, "Deployment", "bg-gitops-receiver")
	containers, _, err := unstructured.NestedSlice(recv.Object, "spec", "template", "spec", "containers")
	require.NoError(t, err)
	require.Len(t, containers, 1)
	c := containers[0].(map[string]any)
	assert.Equal(t, ctrl["image"], c["image"], "the controller's image")
	assert.Equal(t, "controller", c["args"].([]any)[0])
	assert.Contains(t, c["args"], "--receiver-only")
	assert.NotContains(t, c["args"], "--leader-elect")

	podLabels, _, err := unstructured.NestedStringMap(recv.Object, "spec", "template", "metadata", "labels")
	require.NoError(t, err)
	selector, _, err := unstructured.NestedStringMap(find(t, rendered, "Service", "bg-gitops-receiver").Object, "spec", "selector")
	require.NoError(t, err)
	assert.Equal(t, podLabels, selector)
	assert.NotEqual(t, "bg-gitops", podLabels["app.kubernetes.io/name"],
		"not labelled as the controller, which `bg-gitops check` and `version` look for")
}

// TestConfigReceiverHoldsOnlyTheReceiversRights: the receiver's pods face
// the internet, so they run as a ServiceAccount of their own that may
// read GitRepositories and Secrets, patch GitRepositories and ask the
// API server about metrics scrapers, and nothing else: not the
// controller's account, which impersonates every tenant's applying
// ServiceAccount and writes FlinkDeployments.
func TestConfigReceiverHoldsOnlyTheReceiversRights(t *testing.T) {
	objs, err := render.Build(root, "config/receiver", render.Options{})
	require.NoError(t, err)
	var rendered []*unstructured.Unstructured
	for _, u := range objs {
		rendered = append(rendered, normalize(t, u.Object))
	}
	recv := find(t, rendered, "Deployment", "bg-gitops-receiver")
	account, _, err := unstructured.NestedString(recv.Object, "spec", "template", "spec", "serviceAccountName")
	require.NoError(t, err)
	require.NotEmpty(t, account)
	ctrlAccount, _, err := unstructured.NestedString(find(t, rendered, "Deployment", "bg-gitops-controller").Object,
		"spec", "template", "spec", "serviceAccountName")
	require.NoError(t, err)
	assert.NotEqual(t, ctrlAccount, account, "the controller's account")
	find(t, rendered, "ServiceAccount", account)

	allowed := map[string][]string{ // group/resource: verbs
		"bggitops.dev/gitrepositories":              {"get", "list", "watch", "patch"},
		"/secrets":                                  {"get"},
		"authentication.k8s.io/tokenreviews":        {"create"},
		"authorization.k8s.io/subjectaccessreviews": {"create"},
	}
	granted := map[string][]string{}
	for _, rule := range rulesOf(t, rendered, recv.GetNamespace(), account) {
		assert.NotContains(t, rule, "nonResourceURLs", "%s may not get URLs", account)
		groups, _ := rule["apiGroups"].([]any)
		resources, _ := rule["resources"].([]any)
		verbs, _ := rule["verbs"].([]any)
		for _, g := range groups {
			for _, r := range resources {
				for _, v := range verbs {
					gr := g.(string) + "/" + r.(string)
					assert.Contains(t, allowed[gr], v, "%s may not %s %s", account, v, gr)
					granted[gr] = append(granted[gr], v.(string))
				}
			}
		}
	}
	for gr, verbs := range allowed {
		assert.ElementsMatch(t, verbs, granted[gr], "%s on %s", account, gr)
	}
}

// rulesOf returns the rules of the (Cluster)Roles bound to the
// ServiceAccount namespace/name.
func rulesOf(t *testing.T, objs []*unstructured.Unstructured, namespace, name string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, b := range objs {
		if b.GetKind() != "ClusterRoleBinding" && b.GetKind() != "RoleBinding" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		bound := false
		for _, s := range subjects {
			m := s.(map[string]any)
			bound = bound || (m["kind"] == "ServiceAccount" && m["name"] == name && m["namespace"] == namespace)
		}
		if !bound {
			continue
		}
		kind, _, _ := unstructured.NestedString(b.Object, "roleRef", "kind")
		role, _, _ := unstructured.NestedString(b.Object, "roleRef", "name")
		rules, _, _ := unstructured.NestedSlice(find(t, objs, kind, role).Object, "rules")
		for _, r := range rules {
			out = append(out, r.(map[string]any))
		}
	}
	return out
}
