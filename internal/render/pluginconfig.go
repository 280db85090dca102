/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pluginconfig.go: the preflight's check of generator, transformer and
// validator configs — URLs refused as kustomize will see them, and absolute
// file references.

package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/yaml"

	yamlv3 "go.yaml.in/yaml/v3"
)

// pluginConfig is a generator, transformer or validator entry whose
// configs kustomize will hand to a builtin plugin.
type pluginConfig struct {
	label  string // "generator", "inline transformer", ...
	entry  string // the entry as written, or "transformers[2]" for an inline one
	file   string // the kustomization that lists it, repository-relative
	inline []byte // an inline config
	path   string // a config file (resolved)
	dir    string // a kustomization directory whose output are the configs (resolved)
}

// checkConfigs refuses URLs in the plugin configs exactly as kustomize will
// see them: parsed by kustomize's own resource factory and marshalled the
// way its plugin loader marshals them for Config, and, for a directory, as
// that directory builds (a patch or replacement there can write a URL that
// no file holds). It runs kustomize, so it runs where a build may (holding
// kustomizeSlot); with remote bases on, a directory of configs is not built
// here (nothing is refused, and it could fetch).
func (p *preflight) checkConfigs() error {
	for _, c := range p.configs {
		m, err := p.configResources(c)
		if err != nil {
			return c.fail(err)
		}
		if m == nil {
			continue
		}
		for _, res := range m.Resources() {
			y, err := res.AsYAML()
			if err != nil {
				return c.fail(err)
			}
			if err := p.refuseURLs(c, res.GetKind(), res.GetName(), y); err != nil {
				return err
			}
		}
	}
	return nil
}

// configResources parses the configs of c; nil when kustomize will not load
// them as configs (unparseable: it takes the entry for a path), or c is a
// directory and remote bases are on.
func (p *preflight) configResources(c pluginConfig) (resmap.ResMap, error) {
	rf := resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory())
	switch {
	case c.inline != nil:
		// Unparseable, kustomize takes the entry for a path; a URL
		// there was refused with the kustomization.
		m, err := rf.NewResMapFromBytes(c.inline)
		if err != nil {
			return nil, nil
		}
		return m, nil
	case c.path != "":
		data, err := p.fs.readResolved(p.fs.inner, c.path)
		if err != nil {
			return nil, err
		}
		m, err := rf.NewResMapFromBytes(data)
		if err != nil {
			return nil, nil // kustomize reports it, and loads nothing from it
		}
		return m, nil
	case c.dir != "" && !p.allowRemote:
		return runKustomize(p.fs, c.dir)
	}
	return nil, nil
}

// refuseURLs refuses a config y (of kind and name) that holds a URL, with
// remote bases off.
func (p *preflight) refuseURLs(c pluginConfig, kind, name string, y []byte) error {
	if p.allowRemote {
		return nil
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		return c.fail(err)
	}
	var tree any
	if err := json.Unmarshal(j, &tree); err != nil {
		return c.fail(err)
	}
	if field, url, ok := findURL(tree, ""); ok {
		return c.fail(&urlError{URL: url, Field: field, Kind: kind, Name: name, Err: ErrRemoteRefused})
	}
	return nil
}

func (c pluginConfig) fail(err error) error {
	var limit *LimitError
	if errors.As(err, &limit) {
		return err
	}
	return &refError{Field: c.label, Ref: c.entry, File: c.file, Err: err}
}

// urlError names a URL found in a plugin config.
type urlError struct {
	URL, Field, Kind, Name string
	Err                    error // ErrRemoteRefused
}

func (e *urlError) Error() string {
	return fmt.Sprintf("%s: %v; field %s of %s %s", redact(e.URL), e.Err, e.Field, e.Kind, e.Name)
}

func (e *urlError) Unwrap() error { return e.Err }

// dataKeys are the keys whose values kustomize only ever uses as data
// (annotation values, generator literals, ValueAddTransformer's value),
// never as a location to load: a URL there is not a remote reference.
var dataKeys = []string{"annotations", "commonAnnotations", "literals", "value"}

func isDataKey(k string) bool {
	for _, d := range dataKeys {
		if strings.EqualFold(k, d) {
			return true
		}
	}
	return false
}

// fetchPrefix matches what kustomize's loader fetches (a string that
// net/url parses with scheme http or https: it starts with "http:" or
// "https:", in any case) and, erring towards refusal, any other
// "scheme://" and go-getter's "git::" form.
var fetchPrefix = regexp.MustCompile(`^(?:git::)?(?:[a-z][a-z0-9+.-]*://|https?:)`)

// fetchable returns the part of s that kustomize could fetch over the
// network when it loads s as a path: s itself, or the path of a generator's
// "key=path" file source. A candidate with a control character inside (an
// inline document of several lines) cannot be: net/url refuses it.
func fetchable(s string) (string, bool) {
	cands := []string{s}
	if _, after, ok := strings.Cut(s, "="); ok {
		cands = append(cands, after)
	}
	for _, c := range cands {
		c = strings.TrimSpace(c)
		if strings.ContainsFunc(c, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			continue
		}
		if fetchPrefix.MatchString(strings.ToLower(c)) {
			return c, true
		}
	}
	return "", false
}

// findURL returns the first fetchable string in a decoded YAML/JSON value
// (map keys in sorted order) and its field path, skipping dataKeys.
func findURL(v any, path string) (field, url string, ok bool) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if isDataKey(k) {
				continue
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			if field, url, ok := findURL(v[k], p); ok {
				return field, url, true
			}
		}
	case []any:
		for i, child := range v {
			if field, url, ok := findURL(child, fmt.Sprintf("%s[%d]", path, i)); ok {
				return field, url, true
			}
		}
	case string:
		if url, ok := fetchable(v); ok {
			return path, url, true
		}
	}
	return "", "", false
}

// pathKeys are the keys under which builtin generator and transformer
// configs (ConfigMapGenerator, SecretGenerator, PatchTransformer,
// ReplacementTransformer, ...) name files that kustomize loads.
var pathKeys = map[string]bool{"path": true, "paths": true, "files": true, "envs": true, "env": true, "targetFilePath": true}

// checkPluginConfigPaths refuses absolute file references inside a
// generator/transformer/validator config file. Paths that leave the
// repository are stopped by the sandbox file system when kustomize reads
// them; URLs by checkConfigs.
func (p *preflight) checkPluginConfigPaths(resolved string) error {
	data, err := p.fs.readResolved(p.fs.inner, resolved)
	if err != nil {
		return err
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // kustomize reports malformed YAML with better context
		}
		if err := scanPaths(doc, false); err != nil {
			return err
		}
	}
}

func scanPaths(v any, isPath bool) error {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if err := scanPaths(child, pathKeys[k]); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range v {
			if err := scanPaths(child, isPath); err != nil {
				return err
			}
		}
	case string:
		if isPath && filepath.IsAbs(stripKey(v)) {
			return fmt.Errorf("%s: %w", v, ErrAbsolutePath)
		}
	}
	return nil
}

// stripKey drops the "key=" of a generator file source ("key=path"); an "="
// after a slash belongs to the path or URL (a query such as ?ref=v1).
func stripKey(v string) string {
	i := strings.Index(v, "=")
	if i < 0 || strings.Contains(v[:i], "/") {
		return v
	}
	return v[i+1:]
}
