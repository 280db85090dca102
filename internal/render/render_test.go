/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

var goldenOpts = Options{
	Revision: "main@sha1:4b825dc642cb6eb9a060e54bf8d69288fbee4904",
	Source:   "flink-system/fraud-detection",
}

func TestGoldenOverlays(t *testing.T) {
	for _, overlay := range exampleOverlays(t) {
		t.Run(overlay, func(t *testing.T) {
			got, err := BuildYAML(examples, "./overlays/"+overlay, goldenOpts)
			require.NoError(t, err)
			golden := filepath.Join("testdata", "golden", overlay+".yaml")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -run TestGoldenOverlays -update")
			assert.Equal(t, string(want), string(got))
		})
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	first, err := BuildYAML(examples, "overlays/production", goldenOpts)
	require.NoError(t, err)
	for range 5 {
		again, err := BuildYAML(examples, "overlays/production", goldenOpts)
		require.NoError(t, err)
		require.True(t, bytes.Equal(first, again), "two builds differ")
	}
}

func TestBuildStampsEveryObject(t *testing.T) {
	objs, err := Build(examples, "overlays/staging", goldenOpts)
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	for _, u := range objs {
		assert.Equal(t, goldenOpts.Revision, u.GetAnnotations()[v1alpha1.RevisionAnnotation], objects.ID(u))
		assert.Equal(t, goldenOpts.Source, u.GetAnnotations()[v1alpha1.SourceAnnotation], objects.ID(u))
	}
	assert.Equal(t, "Namespace", objs[0].GetKind(), "namespaces come first")
}

func TestTargetNamespace(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Cluster
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": kustomization("ns.yaml", "cm.yaml", "role.yaml", "crd.yaml", "widget.yaml"),
		"app/ns.yaml":            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n",
		"app/cm.yaml":            strings.Replace(configMap, "  name: app-config\n", "  name: app-config\n  namespace: elsewhere\n", 1),
		"app/role.yaml":          "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\nrules: []\n",
		"app/crd.yaml":           crd,
		"app/widget.yaml":        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
	})
	objs, err := Build(root, "app", Options{TargetNamespace: "team"})
	require.NoError(t, err)
	got := map[string]string{}
	for _, u := range objs {
		got[u.GetKind()] = u.GetNamespace()
	}
	assert.Equal(t, map[string]string{
		"Namespace": "", "CustomResourceDefinition": "", "ClusterRole": "", "Widget": "",
		"ConfigMap": "team",
	}, got)
	assert.Equal(t, []string{"CustomResourceDefinition", "Namespace", "ClusterRole", "ConfigMap", "Widget"}, kinds(objs), "apply order")
}

func TestTargetNamespaceMergingTwoObjectsIsADuplicate(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": kustomization("a.yaml", "b.yaml"),
		"app/a.yaml":             strings.Replace(configMap, "  name: app-config\n", "  name: app-config\n  namespace: a\n", 1),
		"app/b.yaml":             strings.Replace(configMap, "  name: app-config\n", "  name: app-config\n  namespace: b\n", 1),
	})
	_, err := Build(root, "app", Options{})
	require.NoError(t, err)
	objs, err := Build(root, "app", Options{TargetNamespace: "team"})
	require.ErrorIs(t, err, ErrDuplicateObject)
	assert.Nil(t, objs)
	assert.Contains(t, err.Error(), "ConfigMap/team/app-config")
}

func TestSharedPatchElsewhereInRepository(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml": kustomization("cm.yaml"),
		"base/cm.yaml":            configMap,
		"shared/patch.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  key: patched\n",
		"overlay/kustomization.yaml": kustomization("../base") +
			"patches:\n  - path: ../shared/patch.yaml\n",
	})
	objs, err := Build(root, "overlay", Options{})
	require.NoError(t, err)
	require.Len(t, objs, 1)
	assert.Equal(t, map[string]any{"key": "patched"}, objs[0].Object["data"])
}

func TestSymlinkInsideRepositoryIsFollowed(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml":    kustomization("cm.yaml"),
		"base/cm.yaml":               configMap,
		"overlay/base":               "-> ../base",
		"overlay/kustomization.yaml": kustomization("base"),
	})
	objs, err := Build(root, "overlay", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"ConfigMap"}, kinds(objs))
}

func kinds(objs []*unstructuredT) []string {
	out := make([]string, len(objs))
	for i, u := range objs {
		out[i] = u.GetKind()
	}
	return out
}

func TestTargetNamespaceAsksTheScopeHookForUnknownKinds(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": kustomization("gadget.yaml", "widget.yaml"),
		"app/gadget.yaml":        "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n",
		"app/widget.yaml":        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
	})
	hook := func(gvk schema.GroupVersionKind) (bool, bool) {
		return gvk.Kind == "Widget", gvk.Kind == "Widget"
	}
	objs, err := Build(root, "app", Options{TargetNamespace: "team", IsClusterScoped: hook})
	require.NoError(t, err)
	require.Len(t, objs, 2)
	assert.Equal(t, "team", objs[0].GetNamespace(), "unknown kinds default to namespaced")
	assert.Equal(t, "", objs[1].GetNamespace(), "the hook knows Widget is cluster-scoped")
}

// TestWarmRunsAWholeBuild: the build a waiting worker runs to warm
// kustomize up succeeds (an error would leave its start-up to the first
// real build).
func TestWarmRunsAWholeBuild(t *testing.T) {
	require.NoError(t, warmBuild())
}
