/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// preflight.go: preflight, the walk of the kustomization graph before
// kustomize runs that refuses remote references and reports sandbox
// violations with the entry and file that caused them.

package render

import (
	"encoding/json"
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
//
// With remote bases off, nothing kustomize loads may be a URL. kustomize's
// loader (api/internal/loader FileLoader.Load) GETs any path whose scheme is
// http or https with a plain http.Client, and kustomize offers no option or
// hook to turn that off or to give it another client. So the preflight does
// not rely on a list of the fields that are loaded: it refuses every string
// of every kustomization, and of every generator/transformer/validator
// config (inline, in a file, or built by a kustomization directory), that
// starts like a URL (fetchable), except under the few keys kustomize only
// ever treats as data (dataKeys). A field kustomize adds later is covered
// without a change here.
type preflight struct {
	fs          *sandboxFS
	allowRemote bool
	allowFile   bool
	seen        map[string]bool
	// openAPI is set when a kustomization has an openapi field: the build
	// changes kustomize's process-wide schema and puts the default back
	// when it ends.
	openAPI bool
	// configs are the plugin configs to check once the build may run
	// kustomize (checkConfigs).
	configs []pluginConfig
}

func (p *preflight) dir(dir string) error {
	if p.seen[dir] {
		return nil
	}
	p.seen[dir] = true
	file, k, tree, err := p.load(dir)
	if err != nil || k == nil {
		return err
	}
	relFile := rel(p.fs.root, file)
	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 {
		return fmt.Errorf("%w (in %s)", ErrHelmRefused, relFile)
	}
	if len(k.OpenAPI) > 0 {
		p.openAPI = true
	}
	for _, r := range refs(k) {
		if err := p.check(dir, relFile, r); err != nil {
			var nested *refError
			if errors.As(err, &nested) {
				return err // already names its own kustomization
			}
			return &refError{Field: r.field, Ref: r.value, File: relFile, Err: err}
		}
	}
	if !p.allowRemote {
		if field, url, ok := findURL(withoutInlineConfigs(tree), ""); ok {
			return &refError{Field: field, Ref: url, File: relFile, Err: ErrRemoteRefused}
		}
	}
	for _, pl := range []struct {
		field   string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		for i, e := range pl.entries {
			if isInline(e) {
				p.configs = append(p.configs, pluginConfig{
					label: "inline " + singular(pl.field), entry: fmt.Sprintf("%s[%d]", pl.field, i),
					file: relFile, inline: []byte(e),
				})
			}
		}
	}
	return nil
}

// load reads the kustomization file of dir; k is nil when there is none
// (kustomize reports that itself). tree is the file as kustomize decodes
// it (YAML to JSON), for findURL.
func (p *preflight) load(dir string) (string, *types.Kustomization, any, error) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		file := filepath.Join(dir, name)
		resolved, err := resolve(p.fs.root, file, p.fs.links)
		if err != nil {
			return file, nil, nil, err
		}
		if !p.fs.inner.Exists(resolved) {
			continue
		}
		data, err := p.fs.readResolved(p.fs.inner, resolved)
		if err != nil {
			return file, nil, nil, err
		}
		k, tree, err := decodeKustomization(data)
		if err != nil {
			return file, nil, nil, fmt.Errorf("%s: invalid kustomization: %w", rel(p.fs.root, file), err)
		}
		return file, k, tree, nil
	}
	return "", nil, nil, nil
}

// withoutInlineConfigs drops the inline plugin configs from a decoded
// kustomization: checkConfigs checks them as kustomize parses them, and
// kustomize never loads such an entry as a path that could be fetched (a
// string of several lines, or one starting with "{" or "[", has no URL
// scheme for net/url).
func withoutInlineConfigs(tree any) any {
	m, ok := tree.(map[string]any)
	if !ok {
		return tree
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
		list, ok := v.([]any)
		if !ok || !(strings.EqualFold(k, "generators") || strings.EqualFold(k, "transformers") || strings.EqualFold(k, "validators")) {
			continue
		}
		kept := make([]any, len(list))
		for i, e := range list {
			if s, ok := e.(string); !ok || !isInline(s) {
				kept[i] = e
			}
		}
		out[k] = kept
	}
	return out
}

// decodeKustomization decodes a kustomization the way kustomize does
// (sigs.k8s.io/yaml to JSON, then encoding/json, which matches field names
// case-insensitively), into its typed form and a generic tree.
func decodeKustomization(data []byte) (*types.Kustomization, any, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, err
	}
	k := &types.Kustomization{}
	if err := json.Unmarshal(j, k); err != nil {
		return nil, nil, err
	}
	var tree any
	if err := json.Unmarshal(j, &tree); err != nil {
		return nil, nil, err
	}
	return k, tree, nil
}

func (p *preflight) check(dir, file string, r ref) error {
	v := strings.TrimSpace(r.value)
	if isRemote(v) {
		switch {
		case !p.allowRemote:
			return ErrRemoteRefused
		case isFileURL(v) && !p.allowFile:
			return ErrFileURLRefused
		}
		return nil
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
	isDir := p.fs.inner.IsDir(resolved)
	if r.dir && isDir {
		if err := p.dir(resolved); err != nil {
			return err
		}
	}
	if r.plugin {
		// After the directory's own walk, so that plugin configs built
		// from inside it are checked before it is built (post-order).
		c := pluginConfig{label: r.field, entry: r.value, file: file}
		if isDir {
			c.dir = resolved
		} else {
			c.path = resolved
		}
		p.configs = append(p.configs, c)
		if !isDir {
			return p.checkPluginConfigPaths(resolved)
		}
	}
	return nil
}

// isInline reports whether a generators/transformers/validators entry is
// an inline config rather than a path. kustomize decides by trying to parse
// it as resources; a config always spans lines or is a flow mapping, and an
// entry taken for a path that is not one fails the path checks.
func isInline(e string) bool {
	t := strings.TrimSpace(e)
	return strings.Contains(t, "\n") || strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")
}

func singular(field string) string { return strings.TrimSuffix(field, "s") }

// refs lists the entries of k that name files, directories or URLs.
func refs(k *types.Kustomization) []ref {
	var out []ref
	add := func(field string, dir bool, vs ...string) {
		plugin := field == "generator" || field == "transformer" || field == "validator"
		for _, v := range vs {
			// Generators, transformers, validators and strategic-merge
			// patches may be inline YAML rather than paths.
			if v != "" && !isInline(v) {
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
	for _, pt := range k.PatchesJson6902 {
		add("patchesJson6902 path", false, pt.Path)
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
