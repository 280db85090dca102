/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// Labels, annotations, name prefixes and suffixes and namespaces are
// written into every place their fieldSpecs name, and a fieldSpec walks
// every item of every list on its path (kustomize's fieldspec filter visits
// the elements of any sequence it meets, [] or not). The default fieldSpecs
// reach a few places per object (metadataPlaces); those a kustomization's
// configurations add, or a LabelTransformer's (or other builtin
// transformer's) config names, may reach hundreds: 700 labels into 700
// fieldSpecs of one object, or into 700 list items, took a GiB. So each
// such path is measured in every object read, like a replacement's target
// path (the places it reaches, one created where it is missing), and what
// is written is charged once per place.

// labelPlaceNodes is what a label or annotation costs in one place beyond
// the defaults, in nodes: its key and value, and what kustomize makes of
// them (measured, 700 labels into 300 list items took about 0.9 KiB of
// heap per label and place, where a node read takes about half a KiB).
const labelPlaceNodes = 4

// fieldSpecPath is the path of one fieldSpec, as written.
type fieldSpecPath struct {
	path   string
	create bool
}

// metaSpec is one set of labels (or annotations, prefix, namespace) and
// the fieldSpecs it is written into, beyond the defaults.
type metaSpec struct {
	per   cost // one place
	paths []fieldSpecPath
}

// labelPlaces is a build's account of its metaSpecs and of the places
// their paths reach in the objects read.
type labelPlaces struct {
	watched map[fieldSpecPath]*int64
	blind   bool // an object could not be measured
	entries []labelEntry
}

type labelEntry struct {
	spec *metaSpec
	asOf int64 // places its paths reached before it could reach any
}

// watch has the paths of m measured in every object read from now on
// (before kustomize reads any object: the preflight and checkConfigs).
func (l *labelPlaces) watch(m *metaSpec) {
	if l.watched == nil {
		l.watched = map[fieldSpecPath]*int64{}
	}
	for _, p := range m.paths {
		if _, ok := l.watched[p]; !ok && len(l.watched) < maxWatched {
			l.watched[p] = new(int64)
		}
	}
}

// add counts m against the objects read from objs on; a component's
// (objs 0) reaches every object, those measured before it included.
func (l *labelPlaces) add(m *metaSpec, objs, read int64) {
	e := labelEntry{spec: m}
	if objs > 0 {
		e.asOf = l.places(m, objs, read)
	}
	l.entries = append(l.entries, e)
}

// places bounds the places the paths of m reach in the objects read: a
// path not measured may reach every node read, and one created per object.
func (l *labelPlaces) places(m *metaSpec, objs, read int64) int64 {
	var n int64
	for _, p := range m.paths {
		if w, ok := l.watched[p]; ok && !l.blind {
			n = satAdd(n, *w)
		} else {
			n = satAdd(n, satAdd(read, objs))
		}
	}
	return n
}

func (l *labelPlaces) want(objs, read int64) cost {
	var w cost
	for _, e := range l.entries {
		w = w.plus(e.spec.per.times(max(l.places(e.spec, objs, read)-e.asOf, 0)))
	}
	return w
}

// measure adds the places the watched paths reach in the objects of data,
// a file kustomize read (its nodes charged: parsing it is bounded).
func (l *labelPlaces) measure(data []byte) {
	if len(l.watched) == 0 {
		return
	}
	for _, piece := range splitPieces(strings.ReplaceAll(string(data), "\r\n", "\n")) {
		var doc yamlv3.Node
		if yamlv3.NewDecoder(strings.NewReader(piece)).Decode(&doc) != nil || len(doc.Content) == 0 {
			continue // kustomize refuses it, or it is empty
		}
		l.measureObject(doc.Content[0], 0)
	}
}

// maxListDepth bounds the lists of lists a path walks (an alias cycle,
// refused by the read, would have no end).
const maxListDepth = 64

// measureObject measures an object, and the items of a List, which
// kustomize reads as objects.
func (l *labelPlaces) measureObject(n *yamlv3.Node, depth int) {
	n = unalias(n)
	if n == nil || n.Kind != yamlv3.MappingNode || depth > maxListDepth {
		return
	}
	if kind := child(n, "kind"); kind != nil && strings.HasSuffix(kind.Value, "List") {
		if items := unalias(child(n, "items")); items != nil && items.Kind == yamlv3.SequenceNode {
			for _, e := range items.Content {
				l.measureObject(e, depth+1)
			}
		}
	}
	for p, w := range l.watched {
		*w = satAdd(*w, l.reach(n, strings.Split(p.path, "/"), p.create, 0))
	}
}

// reach counts the places the path parts reach from n, as kustomize's
// fieldspec filter walks: a key per part ("x[]" a list that is not
// created), every element of a list met on the way.
func (l *labelPlaces) reach(n *yamlv3.Node, parts []string, create bool, depth int) int64 {
	n = unalias(n)
	switch {
	case len(parts) == 0:
		return 1
	case n == nil:
		return 0
	case depth > maxListDepth:
		l.blind = true
		return 0
	case n.Kind == yamlv3.SequenceNode:
		var total int64
		for _, e := range n.Content {
			total = satAdd(total, l.reach(e, parts, create, depth+1))
		}
		return total
	case n.Kind != yamlv3.MappingNode:
		return 0
	}
	name, seq := strings.CutSuffix(parts[0], "[]")
	if v := child(n, name); v != nil {
		return l.reach(v, parts[1:], create, depth)
	}
	if create && !seq {
		return 1 // created: a chain of mappings, one place
	}
	return 0
}

func unalias(n *yamlv3.Node) *yamlv3.Node {
	for i := 0; n != nil && n.Kind == yamlv3.AliasNode && i < maxListDepth; i++ {
		n = n.Alias
	}
	return n
}

// child is the value of key in mapping m, nil if none.
func child(m *yamlv3.Node, key string) *yamlv3.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// metaConfigKeys are the fields of a configurations file whose fieldSpecs
// receive a kustomization's labels, annotations, name prefix or suffix and
// namespace.
var metaConfigKeys = []string{"commonLabels", "templateLabels", "commonAnnotations", "namePrefix", "nameSuffix", "namespace"}

// metaSpecOf is what a kustomization in dir writes beyond the default
// places: its metadata into the fieldSpecs its configurations files and
// labels entries add; nil if nothing.
func (s *sandboxFS) metaSpecOf(k *types.Kustomization, dir string) *metaSpec {
	per := metadataCost(k)
	if per == (cost{}) {
		return nil
	}
	per.nodes = satMul(per.nodes/2, labelPlaceNodes)
	var paths []fieldSpecPath
	for _, l := range k.Labels {
		paths = appendSpecs(paths, l.FieldSpecs)
	}
	for _, c := range k.Configurations {
		paths = append(paths, s.peekConfiguration(dir, c)...)
	}
	if len(paths) == 0 {
		return nil
	}
	return &metaSpec{per: per.plus(cost{nodes: 1}), paths: paths}
}

func appendSpecs(paths []fieldSpecPath, fss []types.FieldSpec) []fieldSpecPath {
	for _, fs := range fss {
		paths = append(paths, fieldSpecPath{path: fs.Path, create: fs.CreateIfNotPresent})
	}
	return paths
}

// peekConfiguration returns the metadata fieldSpecs of the configurations
// file p, relative to dir (peeked, once per build, like a patch file).
func (s *sandboxFS) peekConfiguration(dir, p string) []fieldSpecPath {
	f := &s.budget.fan
	fsys, r, ok := s.peekPath(dir, p)
	if !ok {
		return nil
	}
	if paths, ok := f.configurationFiles[r]; ok {
		return paths
	}
	var paths []fieldSpecPath
	var c map[string][]types.FieldSpec
	if data, ok := s.peekRead(fsys, r); ok && yaml.Unmarshal(data, &c) == nil {
		for key, fss := range c {
			for _, want := range metaConfigKeys {
				if strings.EqualFold(key, want) { // kustomize decodes it as JSON
					paths = appendSpecs(paths, fss)
				}
			}
		}
	}
	if f.configurationFiles == nil {
		f.configurationFiles = map[string][]fieldSpecPath{}
	}
	f.configurationFiles[r] = paths
	return paths
}

// metaTransformer is what a builtin LabelTransformer, AnnotationsTransformer,
// PrefixSuffixTransformer, PrefixTransformer, SuffixTransformer or
// NamespaceTransformer config writes: nil for another kind.
func metaTransformer(config []byte) *metaSpec {
	var c struct {
		Kind        string            `json:"kind"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Prefix      string            `json:"prefix"`
		Suffix      string            `json:"suffix"`
		Metadata    struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		FieldSpecs []types.FieldSpec `json:"fieldSpecs"`
	}
	if yaml.Unmarshal(config, &c) != nil {
		return nil
	}
	per := cost{nodes: 1}
	switch c.Kind {
	case "LabelTransformer", "AnnotationsTransformer":
		for key, v := range mergedMaps(c.Labels, c.Annotations) {
			per = per.plus(cost{nodes: labelPlaceNodes, bytes: int64(len(key) + len(v))})
		}
	case "PrefixSuffixTransformer", "PrefixTransformer", "SuffixTransformer", "NamespaceTransformer":
		per.bytes = int64(len(c.Prefix) + len(c.Suffix) + len(c.Metadata.Namespace))
	default:
		return nil
	}
	return &metaSpec{per: per, paths: appendSpecs(nil, c.FieldSpecs)}
}

func mergedMaps(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out["a/"+k] = v // kept apart from a label of the same key
	}
	return out
}
