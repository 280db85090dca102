/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"regexp"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/types"
)

// fileObjects bounds the objects kustomize makes of one read of the file
// path: as resources (every document, and every item of a List, however
// nested or written), and, for a kustomization, the ConfigMaps and Secrets
// its generators make and the documents of its inline configs and patches.
// A read serves one of these, so the larger counts. It is charged before
// kustomize sees the file: kustomize's handling of many objects does no
// file operation and grows with their square, so counting its output
// would come minutes too late.
func fileObjects(path string, data []byte) int64 {
	n := resourceObjects(data)
	if isKustomizationFile(path) {
		n = max(n, kustomizationObjects(data))
	}
	return n
}

// kustomizeSeparator is kyaml's document separator (kio.ByteReader): any
// line that starts with "---".
var kustomizeSeparator = regexp.MustCompile(`\n---.*\n`)

// resourceObjects bounds the resources kustomize's resource factory makes
// of data (api/resource.Factory.RNodesFromBytes): it splits documents at
// separator lines, decodes the first document of each, unwraps a single
// List or ResourceList document, and replaces every object whose kind ends
// in "List" by its items, recursively. Without "items" written out (not
// escaped, a backslash, nor decoded from a tag, '!'), each document is at
// most one object; otherwise the documents are decoded and their items
// counted (a decode the node budget charged before bounds).
func resourceObjects(data []byte) int64 {
	if n, ok := documentObjects(data); ok {
		return n
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	pieces := splitPieces(text)
	var n int64
	for _, p := range pieces {
		if !hasContent(p) {
			continue
		}
		var doc yamlv3.Node
		if err := yamlv3.NewDecoder(strings.NewReader(p)).Decode(&doc); err != nil {
			// kustomize refuses the file; count the document anyway.
			n = satAdd(n, 1)
			continue
		}
		c := &itemCounter{memo: map[*yamlv3.Node]int64{}, open: map[*yamlv3.Node]bool{}}
		for _, root := range doc.Content {
			n = satAdd(n, c.objects(root))
		}
	}
	return n
}

// documentObjects is resourceObjects when it needs no parse (ok): data
// has no "items", backslash or tag, so each document is at most one
// object. It counts the documents with content between lines that start
// with "---" (kyaml's separators, and a few lines more, which only
// splits further) without copying data.
func documentObjects(data []byte) (n int64, ok bool) {
	if bytes.ContainsAny(data, `\!`) || bytes.Contains(data, []byte("items")) {
		return 0, false
	}
	content := false
	for first := true; len(data) > 0; first = false {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		switch {
		case !first && bytes.HasPrefix(line, []byte("---")):
			if content {
				n++
			}
			content = false
		case !content && lineHasContent(string(line)):
			content = true
		}
	}
	if content {
		n++
	}
	return n, true
}

// splitPieces splits text the way kyaml does.
func splitPieces(text string) []string {
	var out []string
	prev := 0
	for _, loc := range kustomizeSeparator.FindAllStringIndex(text, -1) {
		out = append(out, text[prev:loc[0]])
		prev = loc[1]
	}
	return append(out, text[prev:])
}

// hasContent reports whether a piece holds anything but blank lines,
// comments and document markers.
func hasContent(p string) bool {
	for _, line := range strings.Split(p, "\n") {
		if lineHasContent(line) {
			return true
		}
	}
	return false
}

func lineHasContent(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' {
		return false
	}
	return !((strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...")) && isMarkerOnly(line[3:]))
}

func isMarkerOnly(rest string) bool {
	t := strings.TrimSpace(rest)
	return (t == "" || t[0] == '#') && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// itemCounter counts objects in decoded documents; aliases count what they
// stand for (kyaml expands them), once computed.
type itemCounter struct {
	memo map[*yamlv3.Node]int64
	open map[*yamlv3.Node]bool
}

// objects bounds the objects a node stands for: a mapping is one, plus the
// objects of every sequence under an "items" key of it (merged keys
// included), whatever its kind says; anything else is one, which kustomize
// refuses anyway.
func (c *itemCounter) objects(n *yamlv3.Node) int64 {
	for n != nil && n.Kind == yamlv3.AliasNode {
		n = n.Alias
	}
	if n == nil {
		return 0
	}
	if v, ok := c.memo[n]; ok {
		return v
	}
	if c.open[n] {
		return 0
	}
	c.open[n] = true
	defer delete(c.open, n)
	v := int64(1)
	if n.Kind == yamlv3.MappingNode {
		v = satAdd(v, c.items(n))
	}
	c.memo[n] = v
	return v
}

// items counts the objects in the items of mapping m, and of the mappings
// merged into it.
func (c *itemCounter) items(m *yamlv3.Node) int64 {
	var n int64
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		for v != nil && v.Kind == yamlv3.AliasNode {
			v = v.Alias
		}
		if v == nil {
			continue
		}
		tagged := k.Style&yamlv3.TaggedStyle != 0 // !!binary may decode to anything
		switch {
		case (k.Value == "items" || tagged) && v.Kind == yamlv3.SequenceNode:
			for _, e := range v.Content {
				n = satAdd(n, c.objects(e))
			}
		case k.Value == "<<" || k.Tag == "!!merge" || tagged:
			merged := []*yamlv3.Node{v}
			if v.Kind == yamlv3.SequenceNode {
				merged = v.Content
			}
			for _, mm := range merged {
				for mm != nil && mm.Kind == yamlv3.AliasNode {
					mm = mm.Alias
				}
				if mm != nil && mm.Kind == yamlv3.MappingNode && !c.open[mm] {
					c.open[mm] = true
					n = satAdd(n, c.items(mm))
					delete(c.open, mm)
				}
			}
		}
	}
	return n
}

// kustomizationObjects bounds what a kustomization makes besides its
// resources: a ConfigMap or Secret per generator entry, and the documents
// of its inline generator, transformer and validator configs and inline
// patches (kustomize parses each into resources). A kustomization
// kustomize cannot read makes nothing.
func kustomizationObjects(data []byte) int64 {
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return 0
	}
	n := int64(len(k.ConfigMapGenerator) + len(k.SecretGenerator))
	inline := func(s string) {
		if isInline(s) {
			n = satAdd(n, resourceObjects([]byte(s)))
		}
	}
	for _, list := range [][]string{k.Generators, k.Transformers, k.Validators} {
		for _, e := range list {
			inline(e)
		}
	}
	for _, p := range k.Patches {
		inline(p.Patch)
	}
	for _, p := range k.PatchesStrategicMerge {
		inline(string(p))
	}
	return n
}

// textNodes is what the text of data costs, in nodes.
func textNodes(data []byte) int64 {
	return int64(len(data)) / bytesPerNode
}

// bytesPerNode is how many bytes of text cost kustomize about as much
// memory as one YAML node (measured: 8 MiB in one string, ~90 MiB of heap;
// ~0.5 KiB per node).
const bytesPerNode = 64

// readNodes is the node charge of one read of the file path: its YAML
// nodes (kustomizations counted crudely: they hold YAML in strings) and its
// text. A file the build only uses as a generator's data counts its text.
func readNodes(path string, data []byte, dataOnly bool) int64 {
	if dataOnly {
		return textNodes(data)
	}
	return satAdd(yamlNodes(data, isKustomizationFile(path)), textNodes(data))
}
