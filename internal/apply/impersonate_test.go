/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/objects"
)

// serviceAccountForConfigMaps creates a ServiceAccount that may manage
// ConfigMaps in ns and nothing else.
func serviceAccountForConfigMaps(t *testing.T, ns string, verbs ...string) string {
	t.Helper()
	ctx := context.Background()
	if len(verbs) == 0 {
		verbs = []string{"get", "list", "create", "patch", "update", "delete"}
	}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "configmaps", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"configmaps"},
				Verbs: verbs,
			}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}},
		},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return "deployer"
}

func clusterRole(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRole",
		"metadata":   map[string]any{"name": name},
		"rules": []any{map[string]any{
			"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"},
		}},
	}}
}

func TestImpersonationRefusesWhatTheServiceAccountMayNot(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	sa := serviceAccountForConfigMaps(t, ns)
	o := Options{ServiceAccountName: sa, Namespace: ns, Source: source(ns), Prune: true}

	count.reset()
	_, err := a.Apply(context.Background(), []*unstructured.Unstructured{
		configMap(ns, "cm", map[string]any{"k": "1"}),
		clusterRole(ns + "-escalate"),
	}, o)
	wantErrorContains(t, err, "ClusterRole/"+ns+"-escalate", "forbidden", "system:serviceaccount:"+ns+":"+sa)
	if _, ok := getConfigMap(t, ns, "cm"); ok {
		t.Error("configmap was created although the set was refused")
	}
	if w := count.writes.Load(); w != 0 {
		t.Errorf("refused apply made %d writes", w)
	}

	// What it may do, it does, as itself.
	res := mustApply(t, a, []*unstructured.Unstructured{configMap(ns, "cm", map[string]any{"k": "1"})}, o)
	wantActions(t, res, map[string]string{"ConfigMap/" + ns + "/cm": ActionCreated})
	cm, _ := getConfigMap(t, ns, "cm")
	if len(cm.ManagedFields) == 0 || cm.ManagedFields[0].Manager != objects.FieldManager {
		t.Errorf("managed fields = %+v, want manager %s", cm.ManagedFields, objects.FieldManager)
	}

	// Prune runs as the ServiceAccount too.
	o.Inventory = res.Inventory
	res = mustApply(t, a, nil, o)
	wantActions(t, res, map[string]string{"ConfigMap/" + ns + "/cm": ActionPruned})
}

// TestImpersonationAppliesNothingInANamespaceItMayNotWrite: the objects of
// a namespace the ServiceAccount may not write are all left out and named;
// those of its own namespace are applied.
func TestImpersonationAppliesNothingInANamespaceItMayNotWrite(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	other := newNamespace(t)
	sa := serviceAccountForConfigMaps(t, ns)
	_, err := a.Apply(context.Background(), []*unstructured.Unstructured{
		configMap(ns, "ok", nil),
		configMap(other, "not-allowed", nil),
	}, Options{ServiceAccountName: sa, Namespace: ns, Source: source(ns)})
	wantErrorContains(t, err, "ConfigMap/"+other+"/not-allowed", "forbidden", "nothing applied in namespace "+other)
	if _, ok := getConfigMap(t, other, "not-allowed"); ok {
		t.Error("a configmap was created where the account may not write")
	}
	if _, ok := getConfigMap(t, ns, "ok"); !ok {
		t.Error("the account's own namespace was not applied")
	}
}

func TestImpersonationWithoutListReadsObjectByObject(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	sa := serviceAccountForConfigMaps(t, ns, "get", "create", "patch")
	o := Options{ServiceAccountName: sa, Namespace: ns, Source: source(ns)}
	set := []*unstructured.Unstructured{configMap(ns, "a", nil), configMap(ns, "b", nil), configMap(ns, "c", nil)}
	mustApply(t, a, set, o)
	count.reset()
	res := mustApply(t, a, set, o)
	for _, c := range res.Changes {
		if c.Action != ActionUnchanged {
			t.Errorf("%s: %s, want unchanged", c.ID, c.Action)
		}
	}
	if w := count.writes.Load(); w != 0 {
		t.Errorf("idle apply made %d writes", w)
	}
}
