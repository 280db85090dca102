/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// patchInfo is what one application of a patch costs.
type patchInfo struct {
	cost   cost  // one copy: its nodes (aliases expanded) and bytes
	docs   int64 // documents: without a target, each applies to one object
	copies int   // JSON patch copy operations
}

func patchInfoOf(text []byte) patchInfo {
	aliasBytes, aliasNodes, _ := aliasCost(text) // a cycle fails the read of the patch
	return patchInfo{
		cost: cost{
			nodes: satAdd(readNodes("", text, false), aliasNodes),
			bytes: satAdd(int64(len(text)), aliasBytes),
		},
		docs:   max(resourceObjects(text), 1),
		copies: jsonCopyOps(text),
	}
}

// jsonCopyOps counts the copy operations of a JSON patch (in JSON or YAML).
func jsonCopyOps(text []byte) int {
	if !strings.Contains(string(text), "copy") {
		return 0
	}
	var ops []map[string]any
	if yaml.Unmarshal(text, &ops) != nil {
		return 0
	}
	n := 0
	for _, op := range ops {
		if op["op"] == "copy" {
			n++
		}
	}
	return n
}

// A patch or replacement file is needed when the kustomization that names
// it is read: what it costs per object must be known before the objects
// are read, and kustomize reads (and charges) it only after them. So it is
// peeked then, once per build and without a charge; a file kustomize could
// not read (missing, over the limits) is left out, and kustomize's own read
// of it fails.

type peekedPatch struct {
	ok   bool
	info patchInfo
}

// peekPatch is what the patch file p, relative to dir, costs.
func (s *sandboxFS) peekPatch(dir, p string) (patchInfo, bool) {
	f := &s.budget.fan
	fsys, r, ok := s.peekPath(dir, p)
	if !ok {
		return patchInfo{}, false
	}
	if pp, ok := f.patchFiles[r]; ok {
		return pp.info, pp.ok
	}
	var pp peekedPatch
	if data, ok := s.peekRead(fsys, r); ok {
		pp = peekedPatch{ok: true, info: patchInfoOf(data)}
	}
	if f.patchFiles == nil {
		f.patchFiles = map[string]peekedPatch{}
	}
	f.patchFiles[r] = pp
	return pp.info, pp.ok
}

// peekReplacements returns the replacements of the file p, relative to dir.
func (s *sandboxFS) peekReplacements(dir, p string) []types.Replacement {
	f := &s.budget.fan
	fsys, r, ok := s.peekPath(dir, p)
	if !ok {
		return nil
	}
	if rs, ok := f.replacementFiles[r]; ok {
		return rs
	}
	var rs []types.Replacement
	if data, ok := s.peekRead(fsys, r); ok {
		rs = replacementsOf(data)
	}
	if f.replacementFiles == nil {
		f.replacementFiles = map[string][]types.Replacement{}
	}
	f.replacementFiles[r] = rs
	return rs
}

// peekPath resolves the path p, relative to dir, that a kustomization names.
func (s *sandboxFS) peekPath(dir, p string) (filesys.FileSystem, string, bool) {
	if p == "" || isRemote(p) || filepath.IsAbs(p) {
		return nil, "", false // fetched by kustomize (remote bases on), or refused
	}
	fsys, r, err := s.path(filepath.Join(dir, p))
	return fsys, r, err == nil
}

// peekRead reads the resolved path r if the build may still read and parse
// it: its bytes and nodes fit what is left of the limits.
func (s *sandboxFS) peekRead(fsys filesys.FileSystem, r string) ([]byte, bool) {
	left := s.budget.remaining()
	var data []byte
	var err error
	switch lf, ok := s.lazy[r]; {
	case ok && left >= 0 && lf.size > left:
		return nil, false
	case ok:
		data, err = lf.read()
	case isDisk(fsys):
		data, err = readCapped(r, left)
	default:
		data, err = fsys.ReadFile(r)
	}
	if err != nil || (left >= 0 && int64(len(data)) > left) {
		return nil, false
	}
	return data, s.budget.nodesLeft(readNodes(r, data, false))
}

// patchSpread is a patch entry: inline, or the file path relative to dir.
func (s *sandboxFS) patchSpread(dir, path, inline string, targeted bool) spread {
	if path != "" {
		info, _ := s.peekPatch(dir, path)
		return spread{patch: info, targeted: targeted}
	}
	return spread{patch: patchInfoOf([]byte(inline)), targeted: targeted}
}

// spreadsOf lists the patches and replacements of a kustomization in dir.
func (s *sandboxFS) spreadsOf(k *types.Kustomization, dir string) []spread {
	var out []spread
	for _, p := range k.Patches {
		out = append(out, s.patchSpread(dir, p.Path, p.Patch, p.Target != nil))
	}
	for _, p := range k.PatchesJson6902 {
		out = append(out, s.patchSpread(dir, p.Path, p.Patch, true))
	}
	for _, p := range k.PatchesStrategicMerge {
		// kustomize takes an entry it can read as a file for a path.
		if info, ok := s.peekPatch(dir, string(p)); ok {
			out = append(out, spread{patch: info})
		} else {
			out = append(out, spread{patch: patchInfoOf([]byte(p))})
		}
	}
	for _, rf := range k.Replacements {
		out = append(out, s.replacementSpreads(dir, rf)...)
	}
	if m := s.metaSpecOf(k, dir); m != nil {
		out = append(out, spread{meta: m})
	}
	return append(out, metadataSpread(k))
}

// metadataPlaces is how many places of an object kustomize writes a label
// or annotation into, at most for the usual kinds: metadata, selectors
// and pod templates.
const metadataPlaces = 4

// metadataSpread is what a kustomization's labels, annotations, name prefix
// and suffix and namespace add to every object it builds (a megabyte of
// annotation is a megabyte more in each): a copy in each place.
func metadataSpread(k *types.Kustomization) spread {
	return spread{patch: patchInfo{cost: metadataCost(k).times(metadataPlaces)}, targeted: true, noWalk: true}
}

// metadataCost is one copy of a kustomization's labels, annotations, name
// prefix and suffix and namespace.
func metadataCost(k *types.Kustomization) cost {
	var c cost
	add := func(key, value string) {
		c = c.plus(cost{nodes: 2, bytes: int64(len(key) + len(value))})
	}
	for key, v := range k.CommonLabels {
		add(key, v)
	}
	for _, l := range k.Labels {
		for key, v := range l.Pairs {
			add(key, v)
		}
	}
	for key, v := range k.CommonAnnotations {
		add(key, v)
	}
	// Names and the namespace are rewritten in place.
	c.bytes = satAdd(c.bytes, int64(len(k.NamePrefix)+len(k.NameSuffix)+len(k.Namespace)))
	return c
}

// countFanOut counts the patches and replacements of the kustomization at r
// that kustomize just read, against the objects read from objs on (read
// nodes having been read by then).
func (s *sandboxFS) countFanOut(r string, data []byte, objs, read int64) {
	var k types.Kustomization
	if k.Unmarshal(data) != nil {
		return // kustomize refuses it
	}
	f := &s.budget.fan
	dir := filepath.Dir(r)
	component := k.Kind == types.ComponentKind
	if f.counted[r] && !component {
		return
	}
	if f.counted == nil {
		f.counted = map[string]bool{}
	}
	f.counted[r] = true
	s.noteGenerators(&k, dir, int64(len(data)))
	spreads := append(s.spreadsOf(&k, dir), f.configs[r]...)
	if component {
		objs, read = 0, 0
	}
	f.add(spreads, objs, read)
}

// noteConfig records the patches, replacements and labels (fanout_labels.go)
// of a transformer config (as kustomize parsed it) that the kustomization
// at kfile lists, counted with the kustomization's own, and watches the
// paths of the replacements and labels.
func (s *sandboxFS) noteConfig(kfile string, config []byte) {
	var c struct {
		Kind         string                   `json:"kind"`
		Path         string                   `json:"path"`
		Patch        string                   `json:"patch"`
		JSONOp       string                   `json:"jsonOp"`
		Paths        []string                 `json:"paths"`
		Patches      string                   `json:"patches"`
		Target       *types.Selector          `json:"target"`
		Replacements []types.ReplacementField `json:"replacements"`
	}
	if yaml.Unmarshal(config, &c) != nil {
		return
	}
	dir := filepath.Dir(kfile)
	var out []spread
	switch c.Kind {
	case "PatchTransformer":
		out = append(out, s.patchSpread(dir, c.Path, c.Patch, c.Target != nil))
	case "PatchJson6902Transformer":
		out = append(out, s.patchSpread(dir, c.Path, c.JSONOp, true))
	case "PatchStrategicMergeTransformer":
		out = append(out, s.patchSpread(dir, "", c.Patches, false))
		for _, p := range c.Paths {
			out = append(out, s.patchSpread(dir, p, "", false))
		}
	case "ReplacementTransformer":
		for _, rf := range c.Replacements {
			out = append(out, s.replacementSpreads(dir, rf)...)
		}
	case "ConfigMapGenerator", "SecretGenerator":
		s.budget.fan.repl.gen.unknown = true
	}
	if m := metaTransformer(config); m != nil {
		out = append(out, spread{meta: m})
	}
	f := &s.budget.fan
	if f.configs == nil {
		f.configs = map[string][]spread{}
	}
	f.configs[kfile] = append(f.configs[kfile], out...)
	for _, sp := range out {
		if sp.repl != nil {
			f.repl.watch(sp.repl)
		}
		if sp.meta != nil {
			f.labels.watch(sp.meta)
		}
	}
}
