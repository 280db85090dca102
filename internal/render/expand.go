/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"math"

	yamlv3 "go.yaml.in/yaml/v3"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// Amplifiers: a few hundred bytes of input that kustomize turns into
// gigabytes in memory, with no file read in between for the sandbox to
// stop it. They are charged to the build's byte budget (aliases) or capped
// (JSON patch copies).

// maxJSONPatchCopy caps what the copy operations of one JSON patch applied
// to one object may copy in total: each copy can double a document, so 30
// copies of a small ConfigMap's data would take gigabytes. kustomize uses
// this JSON patch library only through this package, and exposes no option
// for it, hence the package variable.
const maxJSONPatchCopy = 2 << 20

func init() {
	if jsonpatch.AccumulatedCopySizeLimit == 0 {
		jsonpatch.AccumulatedCopySizeLimit = maxJSONPatchCopy
	}
}

// aliasExpansion is how many bytes more than it takes written the YAML in
// data takes once its aliases are expanded (kustomize keeps YAML nodes with
// aliases and expands them when it encodes objects: a "billion laughs"
// document of a kilobyte becomes gigabytes). Content that is not YAML, or
// has no aliases, costs nothing more.
func aliasExpansion(data []byte) int64 {
	if !bytes.Contains(data, []byte("*")) || !bytes.Contains(data, []byte("&")) {
		return 0
	}
	var expanded, plain int64
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	sizes := map[*yamlv3.Node]int64{}
	for {
		var doc yamlv3.Node
		if err := dec.Decode(&doc); err != nil {
			break // end of input, or not YAML: kustomize reports that
		}
		expanded = satAdd(expanded, nodeSize(&doc, sizes, map[*yamlv3.Node]bool{}, true))
		plain = satAdd(plain, nodeSize(&doc, nil, nil, false))
	}
	return max(expanded-plain, 0)
}

// nodeSize estimates the bytes n stands for: its scalars plus a little per
// node; with expand, an alias costs what it points to.
func nodeSize(n *yamlv3.Node, memo map[*yamlv3.Node]int64, open map[*yamlv3.Node]bool, expand bool) int64 {
	const perNode = 8
	if n == nil {
		return 0
	}
	if v, ok := memo[n]; ok && expand {
		return v
	}
	var s int64
	switch n.Kind {
	case yamlv3.AliasNode:
		s = perNode
		if expand && !open[n.Alias] {
			open[n.Alias] = true
			s = nodeSize(n.Alias, memo, open, expand)
			delete(open, n.Alias)
		}
	case yamlv3.ScalarNode:
		s = perNode + int64(len(n.Value))
	default:
		s = perNode
		for _, c := range n.Content {
			s = satAdd(s, nodeSize(c, memo, open, expand))
		}
	}
	if expand {
		memo[n] = s
	}
	return s
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
