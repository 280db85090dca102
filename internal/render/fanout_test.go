/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const perObjectMsg = "a patch or replacement applied to many objects counts once per object"

// blockList is a list of n scalars under key, n+1 lines.
func blockList(key string, n int) string {
	return key + ":\n" + strings.Repeat("- a\n", n)
}

// fanOutAttacks are inputs within every read limit that kustomize would
// turn into gigabytes by copying one patch or value into many objects or
// fields (a security review's probes: 1.2 GiB for the patch on 150
// ConfigMaps, 1.5 GiB for the replacement, 4 GiB for the wildcard).
func fanOutAttacks() map[string]map[string]string {
	cms := manyConfigMaps(150)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: any\n"
	bigPatch := cm + blockList("extra", 20000)
	target := "    target:\n      kind: ConfigMap\n"
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\n" + blockList("extra", 20000)
	replacement := "- source: {kind: ConfigMap, name: src, fieldPath: extra}\n  targets:\n" +
		"  - select: {kind: ConfigMap}\n    reject: [{name: src}]\n    fieldPaths: [data]\n"
	items := strings.TrimSuffix(strings.Repeat("1,", 20000), ",")
	var wide strings.Builder
	wide.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tgt\nlist:\n")
	for range 2000 {
		wide.WriteString("- name: a\n  v: [b]\n")
	}
	return map[string]map[string]string{
		"a patch with a target": {
			"app/kustomization.yaml": kustomization("cms.yaml") + "patches:\n  - path: p.yaml\n" + target,
			"app/cms.yaml":           cms, "app/p.yaml": bigPatch,
		},
		"an inline patch with a target": {
			"app/kustomization.yaml": kustomization("cms.yaml") + "patches:\n  - patch: |\n" +
				indent(cm+blockList("extra", 10000), "      ") + target,
			"app/cms.yaml": cms,
		},
		"a JSON patch": {
			"app/kustomization.yaml": kustomization("cms.yaml") + "patchesJson6902:\n  - path: p.json\n" + target + "      name: cm-.*\n",
			"app/cms.yaml":           cms,
			"app/p.json":             `[{"op": "add", "path": "/extra", "value": [` + items + `]}]`,
		},
		"a PatchTransformer config": {
			"app/kustomization.yaml": kustomization("cms.yaml") + "transformers:\n  - |\n" +
				"    apiVersion: builtin\n    kind: PatchTransformer\n    metadata:\n      name: p\n    path: p.yaml\n" + target,
			"app/cms.yaml": cms, "app/p.yaml": bigPatch,
		},
		"a component's patch": {
			"app/kustomization.yaml":  kustomization("cms.yaml") + "components:\n  - ../comp\n",
			"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n  - path: p.yaml\n" + target,
			"app/cms.yaml":            cms, "comp/p.yaml": bigPatch,
		},
		"a replacement": {
			"app/kustomization.yaml": kustomization("cms.yaml", "src.yaml") + "replacements:\n" + replacement,
			"app/cms.yaml":           cms, "app/src.yaml": src,
		},
		"a replacement file": {
			"app/kustomization.yaml": kustomization("cms.yaml", "src.yaml") + "replacements:\n  - path: r.yaml\n",
			"app/cms.yaml":           cms, "app/src.yaml": src, "app/r.yaml": replacement,
		},
		"a replacement into every item of a list": {
			"app/kustomization.yaml": kustomization("src.yaml", "tgt.yaml") + "replacements:\n" +
				"- source: {kind: ConfigMap, name: src, fieldPath: extra}\n  targets:\n" +
				"  - select: {name: tgt}\n    fieldPaths: [\"list.[name=a].v\"]\n",
			"app/src.yaml": strings.Replace(src, blockList("extra", 20000), blockList("extra", 2000), 1),
			"app/tgt.yaml": wide.String(),
		},
		"a generated value replaced into many objects": {
			"app/kustomization.yaml": kustomization("cms.yaml") + "configMapGenerator:\n- name: src\n  files: [big.txt]\n" +
				"replacements:\n- source: {kind: ConfigMap, name: src, fieldPath: data.big\\.txt}\n  targets:\n" +
				"  - select: {kind: ConfigMap}\n    reject: [{name: src}]\n    fieldPaths: [data.k]\n",
			"app/cms.yaml": cms, "app/big.txt": strings.Repeat("x", 4<<20),
		},
		"an annotation on many objects": {
			"app/kustomization.yaml": kustomization("cms.yaml") + "commonAnnotations:\n  a: " + strings.Repeat("x", 1<<20) + "\n",
			"app/cms.yaml":           cms,
		},
	}
}

// TestPatchesAndReplacementsCountPerObject: a patch or replacement that
// kustomize copies into many objects or fields is charged once per copy,
// before kustomize applies it: the attacks fail fast, within a few MiB of
// heap, with the node or byte limit named.
func TestPatchesAndReplacementsCountPerObject(t *testing.T) {
	for name, files := range fanOutAttacks() {
		t.Run(name, func(t *testing.T) {
			root := writeTree(t, files)
			quiet(t)
			start := time.Now()
			var err error
			peak, _ := peakHeap(func() error {
				_, err = Build(root, "app", Options{Limits: Limits{Timeout: time.Minute}})
				return nil
			})
			var le *LimitError
			require.ErrorAs(t, err, &le)
			assert.Contains(t, []string{LimitNodes, LimitBytes}, le.Limit)
			assert.Contains(t, err.Error(), perObjectMsg)
			assert.Less(t, peak, uint64(100<<20), "peak heap")
			assert.Less(t, time.Since(start), 10*time.Second)
			t.Logf("%s, peak heap %d MiB: %v", time.Since(start).Round(time.Millisecond), peak>>20, err)
		})
	}
}

// TestPatchIsChargedBeforeKustomizeGetsTheObjects: the charge comes at the
// read of the objects the patch may reach, so kustomize never holds them.
func TestPatchIsChargedBeforeKustomizeGetsTheObjects(t *testing.T) {
	var reads readResults
	_, err := Build(writeTree(t, fanOutAttacks()["a patch with a target"]), "app", Options{readDone: reads.hook})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitNodes, le.Limit)
	got := reads.only("cms.yaml")
	require.NotEmpty(t, got)
	for _, err := range got {
		require.ErrorAs(t, err, &le)
	}
	assert.Empty(t, reads.only("p.yaml"), "kustomize never read the patch")
}

// TestOrdinaryPatchesAndReplacementsRender: patches on a handful of objects,
// and replacements of the usual kinds (a scalar into a container, with a
// selector or a wildcard, from a component, next to a large CRD or a
// generated dashboard), render as before.
func TestOrdinaryPatchesAndReplacementsRender(t *testing.T) {
	env := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env\ndata:\n  VERSION: \"1.2.4\"\n"
	image := "replacements:\n- source: {kind: ConfigMap, name: env, fieldPath: data.VERSION}\n  targets:\n" +
		"  - select: {kind: Deployment}\n    fieldPaths: [\"spec.template.spec.containers.[name=app].image\"]\n" +
		"    options: {delimiter: ':', index: 1}\n"
	envValue := "replacements:\n- source: {kind: ConfigMap, name: env, fieldPath: data.VERSION}\n  targets:\n" +
		"  - select: {kind: Deployment}\n    fieldPaths: [\"spec.template.spec.containers.*.env.[name=A].value\"]\n"
	annotate := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: any\n  annotations:\n    team: shop\n"
	tests := []struct {
		name  string
		files map[string]string
		check func(t *testing.T, d *unstructured.Unstructured)
	}{{
		name: "patches with a target on a handful of objects",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("d.yaml") + "commonLabels: {team: shop}\npatches:\n" +
				"- path: p.yaml\n  target: {kind: Deployment}\n" +
				"- patch: '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 3}]'\n  target: {kind: Deployment}\n",
			"app/d.yaml": deployments(5), "app/p.yaml": annotate,
		},
		check: func(t *testing.T, d *unstructured.Unstructured) {
			assert.Equal(t, "shop", d.GetAnnotations()["team"])
			replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
			assert.Equal(t, int64(3), replicas)
		},
	}, {
		name: "a replacement into 200 containers",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("d.yaml", "env.yaml") + image,
			"app/d.yaml":             deployments(200), "app/env.yaml": env,
		},
		check: imageTag("1.2.4"),
	}, {
		name: "a replacement file with a wildcard",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("d.yaml", "env.yaml") + "replacements:\n- path: r.yaml\n",
			"app/r.yaml":             strings.TrimPrefix(envValue, "replacements:\n"),
			"app/d.yaml":             deployments(200), "app/env.yaml": env,
		},
		check: func(t *testing.T, d *unstructured.Unstructured) {
			cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			envs, _, _ := unstructured.NestedSlice(cs[0].(map[string]any), "env")
			assert.Equal(t, "1.2.4", envs[0].(map[string]any)["value"])
		},
	}, {
		name: "a component's replacement",
		files: map[string]string{
			"app/kustomization.yaml":  kustomization("d.yaml", "env.yaml") + "components: [../comp]\n",
			"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n" + image,
			"app/d.yaml":              deployments(200), "app/env.yaml": env,
		},
		check: imageTag("1.2.4"),
	}, {
		name: "a replacement next to a large CRD",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("d.yaml", "env.yaml", "crd.yaml") + image,
			"app/d.yaml":             deployments(100), "app/env.yaml": env, "app/crd.yaml": largeCRD(3000),
		},
		check: imageTag("1.2.4"),
	}, {
		name: "a replacement from a ConfigMap generated with a dashboard",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("d.yaml") + "configMapGenerator:\n- name: env\n" +
				"  literals: [VERSION=1.2.4]\n  files: [dashboard.json]\n" + image,
			"app/d.yaml":         deployments(100),
			"app/dashboard.json": `{"panels": "` + strings.Repeat("x", 1<<20) + `"}`,
		},
		check: imageTag("1.2.4"),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Build(writeTree(t, tc.files), "app", Options{})
			require.NoError(t, err)
			n := 0
			for _, o := range objs {
				if o.GetKind() == "Deployment" {
					tc.check(t, o)
					n++
				}
			}
			assert.NotZero(t, n)
		})
	}
}

func imageTag(tag string) func(t *testing.T, d *unstructured.Unstructured) {
	return func(t *testing.T, d *unstructured.Unstructured) {
		cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		require.NotEmpty(t, cs)
		assert.True(t, strings.HasSuffix(fmt.Sprint(cs[0].(map[string]any)["image"]), ":"+tag))
	}
}

func deployments(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, benchDeployment, i, i, i, i, i)
	}
	return b.String()
}

// largeCRD is a CustomResourceDefinition of props properties (about 3 nodes
// and 80 bytes each).
func largeCRD(props int) string {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.example.com\n" +
		"spec:\n  group: example.com\n  names: {kind: Foo, plural: foos}\n  scope: Namespaced\n  versions:\n" +
		"  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n")
	for i := range props {
		fmt.Fprintf(&b, "          p%d:\n            type: string\n            description: property number %d of a foo\n", i, i)
	}
	return b.String()
}

// patchesTree is p patch entries, each with a target that selects every
// one of n ConfigMaps of keys keys.
func patchesTree(t *testing.T, p, n, keys int, extra string) string {
	var cms strings.Builder
	for i := range n {
		fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n", i)
		for k := range keys {
			fmt.Fprintf(&cms, "  k%d: v\n", k)
		}
	}
	target := "    target:\n      kind: ConfigMap\n"
	if n == 1 {
		target = "" // the patch names its object
	}
	return writeTree(t, map[string]string{
		"app/kustomization.yaml": kustomization("cms.yaml") + extra + "patches:\n" + strings.Repeat("  - path: p.yaml\n"+target, p),
		"app/cms.yaml":           cms.String(),
		"app/p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-0\ndata:\n  x: y\n",
	})
}

// TestManyPatchesAreRefusedBeforeTheyRun: applying patches takes time with
// patches × objects × the objects' size, with no file operation for the
// deadline to stop at (500 patches on 500 ConfigMaps ran for minutes past
// it, holding a running place). That work is charged before kustomize
// applies any patch: the build fails at once, and nothing of it is left
// running.
func TestManyPatchesAreRefusedBeforeTheyRun(t *testing.T) {
	tests := map[string]string{
		"500 patches on 500 objects":             patchesTree(t, 500, 500, 1, ""),
		"100 patches on 10 objects of 1000 keys": patchesTree(t, 100, 10, 1000, ""),
		"600 patches on one object of 1000 keys": patchesTree(t, 600, 1, 1000, ""),
	}
	for name, root := range tests {
		t.Run(name, func(t *testing.T) {
			quiet(t)
			start := time.Now()
			_, err := Build(root, "app", Options{Limits: Limits{Timeout: 5 * time.Second}})
			var le *LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, LimitNodes, le.Limit, "refused before it ran, not stopped by its deadline")
			assert.Contains(t, err.Error(), perObjectMsg)
			assert.Zero(t, gate.runningNow(), "nothing of the build still runs")
			t.Logf("%s: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}

// TestSchemaBuildOfManyPatchesDoesNotHoldTheGate: a build that sets
// kustomize's schema runs alone; one whose patches would compute for
// minutes with no file operation is refused before they run, so the gate
// is free for the next build at once.
func TestSchemaBuildOfManyPatchesDoesNotHoldTheGate(t *testing.T) {
	quiet(t)
	root := patchesTree(t, 400, 400, 1, "openapi:\n  path: schema.json\n")
	writeFile(t, filepath.Join(root, "app", "schema.json"), `{"definitions": {}}`)
	_, err := Build(root, "app", Options{Limits: Limits{Timeout: 5 * time.Second}})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitNodes, le.Limit)
	assert.Zero(t, gate.runningNow(), "it does not hold the gate")

	objs, err := Build(simpleTree(t, nil), "app", Options{Limits: Limits{Timeout: time.Second}})
	require.NoError(t, err, "the next build runs at once")
	assert.Len(t, objs, 1)
}

// TestOneRunningBuildPerTenant: a tenant's builds take one running place
// at most, abandoned ones included: its next build waits (and fails as
// Waiting, to be retried) while other tenants' builds run.
func TestOneRunningBuildPerTenant(t *testing.T) {
	withSlots(t, 2)
	stuck := newBlocker(t, "app/cm.yaml")
	_, err := Build(simpleTree(t, nil), "app", Options{Tenant: "team-a", readHook: stuck.hook, Limits: Limits{Timeout: 200 * time.Millisecond}})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	require.False(t, le.Waiting, "it ran past its own deadline")
	require.Equal(t, 1, gate.runningNow(), "and keeps its place, one of two")

	_, err = Build(simpleTree(t, nil), "app", Options{Tenant: "team-a", Limits: Limits{Timeout: 300 * time.Millisecond}})
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Waiting, "team-a's next build waits, though a place is free")
	assert.Contains(t, err.Error(), "one per tenant")

	objs, err := Build(simpleTree(t, nil), "app", Options{Tenant: "team-b", Limits: Limits{Timeout: time.Minute}})
	require.NoError(t, err, "team-b's build runs")
	assert.Len(t, objs, 1)

	stuck.unblock()
	waitFor(t, "the abandoned build to end", func() bool { return gate.runningNow() == 0 })
	objs, err = Build(simpleTree(t, nil), "app", Options{Tenant: "team-a", Limits: Limits{Timeout: time.Minute}})
	require.NoError(t, err, "team-a's place is back")
	assert.Len(t, objs, 1)
}

// TestFanOutFromTheObjectStore: a build from a ref (no checkout) peeks
// its patch and replacement files in the object store the same way.
func TestFanOutFromTheObjectStore(t *testing.T) {
	attacks := fanOutAttacks()
	for _, name := range []string{"a patch with a target", "a replacement file"} {
		r := newGitRepo(t)
		for p, content := range attacks[name] {
			require.NoError(t, r.write(p, content))
		}
		r.commit(name)
		_, _, err := BuildRef(r.dir, "main", "app", Options{})
		var le *LimitError
		require.ErrorAs(t, err, &le, name)
		assert.Equal(t, LimitNodes, le.Limit, name)
	}
}
