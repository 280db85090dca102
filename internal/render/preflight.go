/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// ref is one path-like entry of a kustomization.
type ref struct {
	field  string // singular name of the kustomization field, for messages
	value  string
	dir    bool // may name a kustomization directory to descend into
	plugin bool // may name a generator/transformer/validator config file
}

// preflight walks the kustomization graph from dir before kustomize runs,
// so that remote references are refused before kustomize could fetch them
// and sandbox violations are reported with the entry and file that caused
// them, rather than as kustomize's nested accumulation errors.
type preflight struct {
	fs          *sandboxFS
	allowRemote bool
	seen        map[string]bool
}

func (p *preflight) dir(dir string) error {
	if p.seen[dir] {
		return nil
	}
	p.seen[dir] = true
	file, k, err := p.load(dir)
	if err != nil || k == nil {
		return err
	}
	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 {
		return fmt.Errorf("%w (in %s)", ErrHelmRefused, rel(p.fs.root, file))
	}
	for _, r := range refs(k) {
		if err := p.check(dir, r); err != nil {
			var nested *refError
			if errors.As(err, &nested) {
				return err // already names its own kustomization
			}
			return &refError{Field: r.field, Ref: r.value, File: rel(p.fs.root, file), Err: err}
		}
	}
	return nil
}

// load reads the kustomization file of dir; k is nil when there is none
// (kustomize reports that itself).
func (p *preflight) load(dir string) (string, *types.Kustomization, error) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		file := filepath.Join(dir, name)
		resolved, err := resolve(p.fs.root, file, p.fs.links)
		if err != nil {
			return file, nil, err
		}
		if !p.fs.inner.Exists(resolved) {
			continue
		}
		data, err := p.fs.inner.ReadFile(resolved)
		if err != nil {
			return file, nil, err
		}
		k := &types.Kustomization{}
		if err := yaml.Unmarshal(data, k); err != nil {
			return file, nil, fmt.Errorf("%s: invalid kustomization: %w", rel(p.fs.root, file), err)
		}
		return file, k, nil
	}
	return "", nil, nil
}

func (p *preflight) check(dir string, r ref) error {
	v := strings.TrimSpace(r.value)
	if isRemote(v) {
		if p.allowRemote {
			return nil
		}
		return ErrRemoteRefused
	}
	if filepath.IsAbs(v) {
		return ErrAbsolutePath
	}
	resolved, err := resolve(p.fs.root, filepath.Join(dir, v), p.fs.links)
	if err != nil {
		return err
	}
	if !p.fs.inner.Exists(resolved) {
		return ErrNotFound
	}
	switch {
	case r.dir && p.fs.inner.IsDir(resolved):
		return p.dir(resolved)
	case r.plugin:
		return p.checkPluginConfig(resolved)
	}
	return nil
}

// refs lists the entries of k that name files, directories or URLs.
func refs(k *types.Kustomization) []ref {
	var out []ref
	add := func(field string, dir bool, vs ...string) {
		plugin := field == "generator" || field == "transformer" || field == "validator"
		for _, v := range vs {
			// Generators, transformers, validators and strategic-merge
			// patches may be inline YAML rather than paths.
			if v != "" && !strings.Contains(v, "\n") {
				out = append(out, ref{field: field, value: v, dir: dir, plugin: plugin})
			}
		}
	}
	add("resource", true, k.Resources...)
	add("base", true, k.Bases...)
	add("component", true, k.Components...)
	add("generator", true, k.Generators...)
	add("transformer", true, k.Transformers...)
	add("validator", true, k.Validators...)
	add("crd", false, k.Crds...)
	add("configuration", false, k.Configurations...)
	add("openapi", false, k.OpenAPI["path"])
	for _, pt := range k.Patches {
		add("patch", false, pt.Path)
	}
	for _, pt := range k.PatchesStrategicMerge {
		add("patch", false, string(pt))
	}
	for _, rp := range k.Replacements {
		add("replacement", false, rp.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		out = append(out, kvRefs("configMapGenerator file", g.KvPairSources)...)
	}
	for _, g := range k.SecretGenerator {
		out = append(out, kvRefs("secretGenerator file", g.KvPairSources)...)
	}
	return out
}

// kvRefs lists the files of a generator ("key=path" or "path").
func kvRefs(field string, s types.KvPairSources) []ref {
	var out []ref
	for _, f := range s.FileSources {
		out = append(out, ref{field: field, value: stripKey(f)})
	}
	for _, f := range append(append([]string(nil), s.EnvSources...), s.EnvSource) {
		if f != "" {
			out = append(out, ref{field: field, value: f})
		}
	}
	return out
}
