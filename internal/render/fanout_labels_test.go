/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const perPlaceMsg = "labels or annotations written into many places once per place"

// manyLabels is n labels under key, indented by pad.
func manyLabels(key, pad string, n int) string {
	var b strings.Builder
	b.WriteString(key + ":\n")
	for i := range n {
		fmt.Fprintf(&b, "%s  k%d: v\n", pad, i)
	}
	return b.String()
}

// labelAttacks are a security review's probes: 700 labels written into 700
// places of one object, by a LabelTransformer's fieldSpecs (910 MiB), by
// configurations aiming commonLabels at every item of a list (1,055 MiB),
// from a component, and by a labels entry's own fields.
func labelAttacks() map[string]map[string]string {
	var specs strings.Builder
	for i := range 700 {
		fmt.Fprintf(&specs, "- path: data/p%d\n  create: true\n", i)
	}
	obj := "apiVersion: v1\nkind: Foo\nmetadata:\n  name: a\n"
	list := obj + "spec:\n  items: [" + strings.Repeat("{},", 700) + "]\n"
	return map[string]map[string]string{
		"a LabelTransformer with many fieldSpecs": {
			"app/kustomization.yaml": kustomization("o.yaml") + "transformers:\n- lt.yaml\n",
			"app/o.yaml":             obj,
			"app/lt.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\n" +
				manyLabels("labels", "", 700) + "fieldSpecs:\n" + specs.String(),
		},
		"commonLabels into every item of a list": {
			"app/kustomization.yaml": kustomization("o.yaml") + "configurations:\n- conf.yaml\n" + manyLabels("commonLabels", "", 700),
			"app/conf.yaml":          "commonLabels:\n- path: spec/items[]/l\n  create: true\n",
			"app/o.yaml":             list,
		},
		"a component's commonLabels into every item of a list": {
			"app/kustomization.yaml": kustomization("o.yaml") + "components:\n- ../comp\n",
			"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n" +
				"configurations:\n- conf.yaml\n" + manyLabels("commonLabels", "", 700),
			"comp/conf.yaml": "commonLabels:\n- path: spec/items[]/l\n  create: true\n",
			"app/o.yaml":     list,
		},
		"a labels entry's fields into every item of a list": {
			"app/kustomization.yaml": kustomization("o.yaml") + "labels:\n- " + manyLabels("pairs", "  ", 700) +
				"  fields:\n  - path: spec/items/l\n    create: true\n",
			"app/o.yaml": list,
		},
	}
}

// TestLabelsCountPerPlace: labels written into many places of an object
// are charged once per place, before kustomize writes them: the probes
// fail fast, within a few MiB of heap, with the node limit named.
func TestLabelsCountPerPlace(t *testing.T) {
	for name, files := range labelAttacks() {
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
			assert.Equal(t, LimitNodes, le.Limit)
			assert.Contains(t, err.Error(), perPlaceMsg)
			assert.Less(t, peak, uint64(100<<20), "peak heap")
			assert.Less(t, time.Since(start), 10*time.Second)
			t.Logf("%s, peak heap %d MiB: %v", time.Since(start).Round(time.Millisecond), peak>>20, err)
		})
	}
}

// TestOrdinaryLabelsIntoCRDListRender: commonLabels with a configurations
// file that adds a CRD's list of templates, and a LabelTransformer with a
// few fieldSpecs, render as kustomize makes them.
func TestOrdinaryLabelsIntoCRDListRender(t *testing.T) {
	crd := "apiVersion: example.com/v1\nkind: Pipeline\nmetadata:\n  name: p\nspec:\n  jobs:\n" +
		strings.Repeat("  - name: j\n    metadata: {}\n", 3)
	lt := "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\nlabels:\n  extra: x\n" +
		"fieldSpecs:\n- path: metadata/labels\n  create: true\n- path: spec/jobs/metadata/labels\n  create: true\n"
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": kustomization("p.yaml") + "configurations:\n- conf.yaml\ntransformers:\n- lt.yaml\n" +
			"commonLabels:\n  app: demo\n  team: data\n",
		"app/conf.yaml": "commonLabels:\n- path: spec/jobs[]/metadata/labels\n  kind: Pipeline\n  create: true\n",
		"app/p.yaml":    crd,
		"app/lt.yaml":   lt,
	})
	quiet(t)
	objs, err := Build(root, "app", Options{})
	require.NoError(t, err)
	require.Len(t, objs, 1)
	jobs, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "jobs")
	require.Len(t, jobs, 3)
	for _, j := range jobs {
		labels := j.(map[string]any)["metadata"].(map[string]any)["labels"]
		assert.Equal(t, map[string]any{"app": "demo", "team": "data", "extra": "x"}, labels)
	}
}
