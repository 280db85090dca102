/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"path/filepath"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/types"
	kyutils "sigs.k8s.io/kustomize/kyaml/utils"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// A replacement copies one value (a field of one object) into every field
// its targets select: a copy per selected object and field path, and per
// matching item for a path with a wildcard (*) or a selector ([name=x]),
// so one value of 2,000 list items copied into 2,000 items of one object
// took 4 GiB. What the value holds is only known once kustomize has built
// the objects, so the preflight collects the replacements' paths and every
// object read is measured at them (replacements.measure): the largest value
// at a source path, and the fields a wildcard path matches in all of them.
// A path the preflight did not see (a remote base) counts the largest
// document read as its value, and every node read as its matches.

// maxWatched bounds the paths measured in every object read; beyond it a
// path counts as one the preflight did not see.
const maxWatched = 64

// replacementSpec is one replacement: where its value comes from and the
// fields it is written to.
type replacementSpec struct {
	value   *cost  // a sourceValue, whose cost is known
	kind    string // the source object's kind
	source  string // the value's field path in it
	parts   []string
	targets []targetSpec
}

type targetSpec struct {
	paths  []string
	wild   []bool // the path has a wildcard or a selector: it may match many fields
	create bool
}

func specOf(r types.Replacement) *replacementSpec {
	s := &replacementSpec{}
	switch {
	case r.SourceValue != nil:
		s.value = &cost{nodes: 1, bytes: int64(len(*r.SourceValue))}
	case r.Source != nil:
		s.kind, s.source = r.Source.Kind, r.Source.FieldPath
		if s.source == "" {
			s.source = types.DefaultReplacementFieldPath
		}
		s.parts = splitPath(s.source)
	}
	for _, t := range r.Targets {
		if t == nil {
			continue
		}
		paths := t.FieldPaths
		if len(paths) == 0 {
			paths = []string{types.DefaultReplacementFieldPath}
		}
		ts := targetSpec{paths: paths, create: t.Options != nil && t.Options.Create}
		for _, p := range paths {
			ts.wild = append(ts.wild, hasWildcard(p))
		}
		s.targets = append(s.targets, ts)
	}
	return s
}

// replacementsOf parses a replacement file as kustomize does: a list of
// replacements, or one.
func replacementsOf(data []byte) []types.Replacement {
	var v any
	if yaml.Unmarshal(data, &v) != nil {
		return nil
	}
	switch v.(type) {
	case []any:
		var rs []types.Replacement
		if yaml.Unmarshal(data, &rs) == nil {
			return rs
		}
	case map[string]any:
		var r types.Replacement
		if yaml.Unmarshal(data, &r) == nil {
			return []types.Replacement{r}
		}
	}
	return nil
}

// replacementSpreads lists the replacements of an entry of a kustomization
// in dir: inline, or in the file it names.
func (s *sandboxFS) replacementSpreads(dir string, rf types.ReplacementField) []spread {
	repls := []types.Replacement{rf.Replacement}
	if rf.Path != "" {
		repls = s.peekReplacements(dir, rf.Path)
	}
	out := make([]spread, 0, len(repls))
	for _, r := range repls {
		out = append(out, spread{repl: specOf(r)})
	}
	return out
}

// replacements are a build's replacements, and what the objects read hold
// at their paths.
type replacements struct {
	entries []replacementEntry
	// sources and matches are the paths watched: the largest value read at
	// each source path, and the fields each wildcard target path matched
	// in all the objects read.
	sources map[string]*watchedSource
	matches map[string]*watchedTarget
	sealed  bool // kustomize runs the build: no more paths
	// blind: an object could not be measured; no path counts as watched.
	blind bool
	gen   generatedValues
}

type watchedSource struct {
	path    []string
	largest cost
}

type watchedTarget struct {
	path    []string
	matched int64
}

type replacementEntry struct {
	spec *replacementSpec
	from int64 // objects read before it could reach any
}

func (r *replacements) add(spec *replacementSpec, objs int64) {
	r.entries = append(r.entries, replacementEntry{spec: spec, from: objs})
}

// watch has the paths of spec measured in every object read from now on.
// The preflight calls it, before kustomize reads any object.
func (r *replacements) watch(spec *replacementSpec) {
	if r.sealed {
		return
	}
	if r.sources == nil {
		r.sources, r.matches = map[string]*watchedSource{}, map[string]*watchedTarget{}
	}
	if _, ok := r.sources[spec.source]; !ok && spec.value == nil && len(r.sources) < maxWatched {
		r.sources[spec.source] = &watchedSource{path: splitPath(spec.source)}
	}
	for _, t := range spec.targets {
		for i, p := range t.paths {
			if _, ok := r.matches[p]; !ok && t.wild[i] && len(r.matches) < maxWatched {
				r.matches[p] = &watchedTarget{path: splitPath(p)}
			}
		}
	}
}

// splitPath splits a field path as kustomize does.
func splitPath(p string) []string { return kyutils.SmarterPathSplitter(p, ".") }

func (r *replacements) seal() { r.sealed = true }

func hasWildcard(path string) bool {
	for _, part := range splitPath(path) {
		if kyaml.IsWildcard(part) || kyaml.IsListIndex(part) {
			return true
		}
	}
	return false
}

// measure measures the watched paths in the objects of data, a file
// kustomize read (and the node budget charged: parsing it is bounded). It
// splits and decodes the file as kustomize's resource factory does
// (resourceObjects).
func (r *replacements) measure(data []byte) {
	if len(r.sources)+len(r.matches) == 0 {
		return
	}
	aliases := bytes.Contains(data, []byte("*")) && bytes.Contains(data, []byte("&"))
	for _, piece := range splitPieces(strings.ReplaceAll(string(data), "\r\n", "\n")) {
		var doc yamlv3.Node
		if yamlv3.NewDecoder(strings.NewReader(piece)).Decode(&doc) != nil || len(doc.Content) == 0 {
			continue // kustomize refuses it, or it is empty
		}
		rn := kyaml.NewRNode(doc.Content[0])
		if aliases && rn.DeAnchor() != nil { // kustomize expands them as it reads
			r.blind = true
			continue
		}
		r.measureObject(rn)
	}
}

// measureObject measures an object, and the items of a List (kustomize
// reads them as objects). A document that is no mapping is no object
// (kyaml would panic reading its kind).
func (r *replacements) measureObject(rn *kyaml.RNode) {
	if rn.YNode().Kind != kyaml.MappingNode {
		return
	}
	defer func() {
		if recover() != nil { // kyaml panics on shapes it does not expect
			r.blind = true
		}
	}()
	if strings.HasSuffix(rn.GetKind(), "List") {
		if items, err := rn.Pipe(kyaml.Lookup("items")); err == nil && items != nil {
			elems, _ := items.Elements()
			for _, e := range elems {
				r.measureObject(e)
			}
		}
	}
	for _, w := range r.sources {
		if v, err := rn.Pipe(kyaml.Lookup(w.path...)); err == nil && v != nil {
			s, _ := (&aliasWalk{}).size(v.YNode(), false)
			w.largest = w.largest.atLeast(cost{nodes: s.nodes, bytes: s.bytes})
		}
	}
	for _, w := range r.matches {
		m, err := rn.Pipe(&kyaml.PathMatcher{Path: w.path})
		if err != nil || m == nil {
			continue
		}
		if elems, err := m.Elements(); err == nil {
			w.matched = satAdd(w.matched, int64(len(elems)))
		}
	}
}

// want is what the replacements may cost once objs objects and read nodes
// have been read, patches having added grownBy nodes to the objects and at
// most growth to any one; largest is the largest document read.
func (r *replacements) want(objs, read, grownBy int64, largest, growth cost) cost {
	var w cost
	for _, e := range r.entries {
		reach := max(objs-e.from, 0)
		var copies int64
		for _, t := range e.spec.targets {
			w.nodes = satAdd(w.nodes, reach) // its selector looks at every object
			for i, p := range t.paths {
				copies = satAdd(copies, r.copies(p, t.wild[i], t.create, reach, read, grownBy))
			}
		}
		w = w.plus(r.value(e.spec, largest).plus(growth).times(copies))
	}
	return w
}

// value bounds the value a replacement copies.
func (r *replacements) value(s *replacementSpec, largest cost) cost {
	if s.value != nil {
		return *s.value
	}
	v := largest
	if w, ok := r.sources[s.source]; ok && !r.blind {
		v = w.largest
	}
	if s.kind == "" || s.kind == "ConfigMap" || s.kind == "Secret" {
		v = v.atLeast(r.gen.value(s.parts, largest))
	}
	return v
}

// copies bounds the fields of reach objects a target field path selects.
func (r *replacements) copies(path string, wild, create bool, reach, read, grownBy int64) int64 {
	if !wild {
		return reach
	}
	n := read // every node read could match
	if w, ok := r.matches[path]; ok && !r.blind {
		n = w.matched
	}
	n = satAdd(n, grownBy) // and every node patches add
	if create {
		n = satAdd(n, reach)
	}
	return n
}

// generatedValues bounds the values of the ConfigMaps and Secrets the build
// generates, which a replacement may take as its source: by key (literals,
// and files by their size), and for env files and generator configs, whose
// keys are not known here, any key.
type generatedValues struct {
	byKey   map[string]int64
	anyKey  int64 // the largest env file
	total   int64 // all values
	keys    int64
	meta    int64 // the largest kustomization: names, labels and annotations come from it
	unknown bool  // a generator config: any file read may be a value
}

func (g *generatedValues) addValue(key string, size int64) {
	if g.byKey == nil {
		g.byKey = map[string]int64{}
	}
	g.byKey[key] = max(g.byKey[key], size)
	g.total = satAdd(g.total, size)
	g.keys++
}

// value bounds what a generated object holds at the field path parts.
func (g *generatedValues) value(parts []string, largest cost) cost {
	if g.keys == 0 && g.anyKey == 0 && !g.unknown {
		return cost{}
	}
	size := g.total
	switch {
	case len(parts) == 2 && isDataField(parts[0]):
		size = max(g.byKey[parts[1]], g.anyKey)
	case len(parts) > 0 && !isDataField(parts[0]):
		size = g.meta
	}
	if g.unknown {
		size = max(size, largest.bytes)
	}
	return cost{nodes: satAdd(satMul(g.keys, 2), 8+g.anyKey/4), bytes: size}
}

func isDataField(f string) bool { return f == "data" || f == "binaryData" || f == "stringData" }

// noteGenerators records the values of the generators of a kustomization
// in dir (size bytes long).
func (s *sandboxFS) noteGenerators(k *types.Kustomization, dir string, size int64) {
	g := &s.budget.fan.repl.gen
	g.meta = max(g.meta, size)
	var sources []types.KvPairSources
	for _, a := range k.ConfigMapGenerator {
		sources = append(sources, a.KvPairSources)
	}
	for _, a := range k.SecretGenerator {
		sources = append(sources, a.KvPairSources)
	}
	for _, kv := range sources {
		for _, l := range kv.LiteralSources {
			key, v, _ := strings.Cut(l, "=")
			g.addValue(key, int64(len(v)))
		}
		for _, f := range kv.FileSources {
			g.addValue(fileKey(f), s.fileSize(dir, stripKey(f)))
		}
		for _, e := range append(append([]string(nil), kv.EnvSources...), kv.EnvSource) {
			if e != "" {
				n := s.fileSize(dir, e)
				g.anyKey, g.total = max(g.anyKey, n), satAdd(g.total, n)
			}
		}
	}
}

// fileKey is the key of a generator's file source ("key=path" or "path").
func fileKey(f string) string {
	if p := stripKey(f); p != f {
		return strings.TrimSuffix(f, "="+p)
	}
	return filepath.Base(f)
}

// fileSize is the size of the file p names in dir, 0 if unknown.
func (s *sandboxFS) fileSize(dir, p string) int64 {
	if isRemote(p) || filepath.IsAbs(p) {
		return 0
	}
	fsys, r, err := s.path(filepath.Join(dir, p))
	if err != nil {
		return 0
	}
	return max(s.size(fsys, r), 0)
}
