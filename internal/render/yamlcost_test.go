/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/provider"

	"github.com/stretchr/testify/assert"
	yamlv3 "go.yaml.in/yaml/v3"
)

// parsedNodes is what go-yaml builds from data, counted the two ways
// kustomize parses a file: split into documents at "---" lines and the
// first document of each decoded (kyaml's ByteReader), or decoded as one
// stream (sigs.k8s.io/yaml, openapi). Strings under reparsedKeys (and in
// sequences under them) are parsed again and counted too, as kustomize
// does with patches and inline configs. ok is false when go-yaml refuses data
// both ways.
func parsedNodes(data []byte) (n int64, ok bool) {
	var pieces int64
	piecesOK := true
	for _, p := range kustomizePieces(data) {
		var doc yamlv3.Node
		err := yamlv3.NewDecoder(strings.NewReader(p)).Decode(&doc)
		if errors.Is(err, io.EOF) {
			continue
		}
		if err != nil {
			piecesOK = false
			break
		}
		pieces += treeNodes(&doc, false)
	}
	var stream int64
	streamOK := true
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var doc yamlv3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			streamOK = false
			break
		}
		stream += treeNodes(&doc, false)
	}
	switch {
	case piecesOK && streamOK:
		return max(pieces, stream), true
	case piecesOK:
		return pieces, true
	case streamOK:
		return stream, true
	}
	return 0, false
}

// treeNodes counts the nodes of a tree (an alias counts one) and of the
// strings kustomize would parse again.
func treeNodes(n *yamlv3.Node, reparse bool) int64 {
	if n == nil {
		return 0
	}
	c := int64(1)
	if reparse && n.Kind == yamlv3.ScalarNode {
		if inner, ok := parsedNodes([]byte(n.Value)); ok {
			c += inner
		}
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			c += treeNodes(n.Content[i], false)
			key := strings.ToLower(n.Content[i].Value)
			c += treeNodes(n.Content[i+1], reparsedKeys[key])
		}
	case yamlv3.SequenceNode:
		for _, e := range n.Content {
			c += treeNodes(e, reparse)
		}
	case yamlv3.DocumentNode:
		for _, e := range n.Content {
			c += treeNodes(e, false)
		}
	}
	return c
}

// kustomizePieces splits data as kyaml's ByteReader does (nil where it
// refuses a separator line).
func kustomizePieces(data []byte) []string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	var out []string
	prev := 0
	for _, loc := range kustomizeSeparator.FindAllStringIndex(s, -1) {
		if rest := strings.TrimSpace(s[loc[0]+4 : loc[1]]); rest != "" && rest[0] != '#' {
			return nil
		}
		out = append(out, s[prev:loc[0]])
		prev = loc[1]
	}
	return append(out, s[prev:])
}

var yamlSeeds = []string{
	configMap,
	"apiVersion: v1\nkind: List\nitems:\n- {kind: ConfigMap, metadata: {name: a}}\n- kind: ConfigMap\n  metadata:\n    name: b\n",
	"a: |\n  x: [1, 2, 3]\n  - y\nb: 1\n",
	"a: >-\n    folded\n  text\nb: [1,2]\n",
	"- |\n x\n- \"y\n  z\"\n- 'a''b'\n",
	"patch: |\n  [1, 1, 1, 1]\ndata: |\n  [1, 1, 1]\n",
	"k: \"a\\x2c[1,1,1]\"\npatch: \"[1\\x2c1\\x2c1]\"\n",
	"&a k: v\n*a : w\n",
	"a: &x |\n  [1,1,1]\nb: *x\n",
	"{\"kind\": \"List\", \"items\": [{\"a\": 1}, {\"b\": [1, 2, {}]}]}\n",
	"[a: 1, b: 2, ? c, {d, e}]\n",
	"? a\n: b\n? - c\n  - d\n: e\n",
	"a:\n- b\n- c: d\n  e: f\n-\n  g: h\n",
	"a: b\n  c d\ne: |2\n   x\n  y\n",
	"---\na: 1\n--- |\n text\n...\n---\n- x\n",
	"a: !!binary |\n  WzEsMSwxXQ==\n",
	"key: value # comment\n  # more\nk2: 'v'\n",
	"a:\n  b:\n    c: [x,\n  y, z]\n  d: e\n",
	"a: |+\n\n  x\n\n\nb: 1\n",
	"- - - a\n    - b\n  - c\n- d\n",
	"a: \"multi\n  line\"\nb: 'single\n\n  line'\n",
	"%YAML 1.2\n---\na: 1\n",
	"a:\tb\n\tc: d\n",
	"a: 1\r\nb:\r\n  - 2\r\n",
	"- |1\n  x\n y\n- z\n",
	"[1,\n2, [3,\n4]] \n",
	"x: [a: 1, b]\n",
	"a: b # c\nd: |\n  ---\n  e\n",
}

// FuzzYAMLNodes: the estimate is never below what go-yaml builds, however
// the YAML is written.
func FuzzYAMLNodes(f *testing.F) {
	for _, s := range yamlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		want, ok := parsedNodes(data)
		if !ok {
			return
		}
		if got := yamlNodes(data, false); got < want {
			t.Fatalf("yamlNodes = %d < %d nodes parsed from\n%q", got, want, data)
		}
		if got := yamlNodes(data, true); got < want {
			t.Fatalf("crude yamlNodes = %d < %d nodes parsed from\n%q", got, want, data)
		}
	})
}

func TestYAMLNodesSeeds(t *testing.T) {
	for _, s := range yamlSeeds {
		want, ok := parsedNodes([]byte(s))
		got := yamlNodes([]byte(s), false)
		t.Logf("%4d >= %4d (%v) %q", got, want, ok, s)
		if ok {
			assert.GreaterOrEqual(t, got, want, "%q", s)
		}
	}
}

// TestYAMLNodesLeavesOutText: text in a string is not counted as nodes,
// unless kustomize parses it again.
func TestYAMLNodesLeavesOutText(t *testing.T) {
	line := `{"panels": [{"id": 1, "title": "a-b", "targets": [1, 2, 3]}]},` + "\n"
	indented := func(n int) string { return strings.Repeat(strings.Repeat(" ", n)+line, 2000) }
	dashboard := strings.Repeat(line, 2000)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dash\ndata:\n  dashboard.json: |\n" + indented(4)
	quoted := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dash\ndata:\n  dashboard.json: " + fmt.Sprintf("%q", dashboard) + "\n"
	patch := "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npatch: |\n" + indented(2)
	seq := "args:\n- |\n" + indented(2)
	psm := "patchesStrategicMerge:\n- |\n" + indented(2)
	for _, tc := range []struct {
		name   string
		data   string
		within int64
		over   int64
	}{
		{name: "block scalar in a ConfigMap", data: cm, within: 20},
		{name: "quoted string in a ConfigMap", data: quoted, within: 20},
		{name: "patch string", data: patch, over: 2000 * 10},
		{name: "sequence entry", data: seq, within: 20},
		{name: "sequence entry under a key kustomize parses", data: psm, over: 2000 * 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := yamlNodes([]byte(tc.data), false)
			if tc.within > 0 {
				assert.LessOrEqual(t, got, tc.within)
			}
			if tc.over > 0 {
				assert.Greater(t, got, tc.over)
			}
		})
	}
}

// FuzzResourceObjects: the count is never below the resources kustomize's
// own factory makes of a file, nor below what a kustomization generates.
func FuzzResourceObjects(f *testing.F) {
	for _, s := range append(yamlSeeds,
		"kind: List\nitems:\n- kind: CMList\n  items: [{kind: A, metadata: {name: a}}, {kind: A, metadata: {name: b}}]\n",
		"x: &l\n  kind: List\n  items: [{kind: A, metadata: {name: a}}]\nkind: AList\nitems: [*l, *l]\n",
		"{\"kind\": \"List\", \"\\u0069tems\": [{\"kind\": \"A\", \"metadata\": {\"name\": \"a\"}}]}",
		"kind: List\n!!binary aXRlbXM=: [{kind: A, metadata: {name: a}}]\n",
		"kind: BList\n<<: {items: [{kind: A, metadata: {name: a}}]}\n",
		"---\n---\nkind: A\nmetadata: {name: a}\n---\n# c\n",
	) {
		f.Add([]byte(s))
	}
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		if b, _, err := aliasCost(data); err != nil || b > 1<<16 {
			return // the sandbox refuses what kyaml would expand forever, and charges alias bombs
		}
		nodes, err := rf.RNodesFromBytes(data)
		if err != nil {
			return
		}
		if got := resourceObjects(data); got < int64(len(nodes)) {
			t.Fatalf("resourceObjects = %d < %d resources from\n%q", got, len(nodes), data)
		}
	})
}
