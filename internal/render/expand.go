/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"errors"
	"math"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// Amplifiers: a few hundred bytes of input that kustomize turns into
// gigabytes in memory, with no file read in between for the sandbox to
// stop it. They are charged to the build's budgets (aliases, as bytes and
// nodes) or capped (JSON patch copies); an alias that contains itself,
// which kustomize would expand forever, is refused.

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

// ErrAliasCycle: a YAML alias inside the node its anchor names (x: &a
// [*a]). go-yaml accepts it; kustomize's expansion of aliases recurses
// until the stack overflows, which kills the process, so the file is
// refused before kustomize reads it.
var ErrAliasCycle = errors.New("a YAML alias refers to a node that contains it; kustomize cannot expand it")

// aliasCost is what expanding the aliases of data adds (kustomize keeps
// YAML nodes with aliases and expands them when it reads objects: a
// "billion laughs" document of a kilobyte becomes gigabytes): bytes more
// than it takes written, and nodes more than it holds. Strings in it that
// hold aliases count too: kustomize parses some strings again (patches,
// inline configs), and which ones does not matter here. Content that is not
// YAML, or has no aliases, costs nothing more.
func aliasCost(data []byte) (extraBytes, extraNodes int64, err error) {
	return aliasCostDepth(data, 1)
}

func aliasCostDepth(data []byte, nested int) (extraBytes, extraNodes int64, err error) {
	if !bytes.Contains(data, []byte("*")) || !bytes.Contains(data, []byte("&")) {
		return 0, 0, nil
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	w := &aliasWalk{memo: map[*yamlv3.Node]size{}, open: map[*yamlv3.Node]bool{}}
	for {
		var doc yamlv3.Node
		if err := dec.Decode(&doc); err != nil {
			break // end of input, or not YAML: kustomize reports that
		}
		expanded, err := w.size(&doc, true)
		if err != nil {
			return 0, 0, err
		}
		plain, _ := (&aliasWalk{}).size(&doc, false)
		extraBytes = satAdd(extraBytes, max(expanded.bytes-plain.bytes, 0))
		extraNodes = satAdd(extraNodes, max(expanded.nodes-plain.nodes, 0))
		if nested > 0 {
			for _, str := range w.strings {
				b, n, err := aliasCostDepth([]byte(str), nested-1)
				if err != nil {
					return 0, 0, err
				}
				extraBytes, extraNodes = satAdd(extraBytes, b), satAdd(extraNodes, n)
			}
		}
		w.strings = w.strings[:0]
	}
	return extraBytes, extraNodes, nil
}

// size is what a node stands for: bytes of its scalars plus a little per
// node, and nodes.
type size struct{ bytes, nodes int64 }

// aliasWalk sizes nodes; with expand, an alias costs what it points to
// (once computed), and strings collects the scalars that hold aliases.
type aliasWalk struct {
	memo    map[*yamlv3.Node]size
	open    map[*yamlv3.Node]bool
	strings []string
}

func (w *aliasWalk) size(n *yamlv3.Node, expand bool) (size, error) {
	const perNode = 8
	if n == nil {
		return size{}, nil
	}
	if v, ok := w.memo[n]; ok && expand {
		return v, nil
	}
	if expand {
		if w.open[n] {
			return size{}, ErrAliasCycle
		}
		w.open[n] = true
		defer delete(w.open, n)
	}
	s := size{bytes: perNode, nodes: 1}
	switch n.Kind {
	case yamlv3.AliasNode:
		if expand {
			v, err := w.size(n.Alias, expand)
			if err != nil {
				return size{}, err
			}
			s = v
		}
	case yamlv3.ScalarNode:
		s.bytes += int64(len(n.Value))
		if expand && strings.Contains(n.Value, "*") && strings.Contains(n.Value, "&") {
			w.strings = append(w.strings, n.Value)
		}
	default:
		for _, c := range n.Content {
			v, err := w.size(c, expand)
			if err != nil {
				return size{}, err
			}
			s.bytes, s.nodes = satAdd(s.bytes, v.bytes), satAdd(s.nodes, v.nodes)
		}
	}
	if expand {
		w.memo[n] = s
	}
	return s, nil
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
