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
	"path/filepath"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// pathKeys are the keys under which builtin generator and transformer
// configs (ConfigMapGenerator, SecretGenerator, PatchTransformer,
// ReplacementTransformer, ...) name files that kustomize loads, possibly
// over HTTP.
var pathKeys = map[string]bool{"path": true, "files": true, "envs": true, "env": true}

// checkPluginConfig refuses remote and absolute file references inside a
// generator/transformer/validator config file. Paths that leave the
// repository are stopped by the sandbox file system when kustomize reads
// them; remote ones must be stopped before kustomize fetches them.
func (p *preflight) checkPluginConfig(resolved string) error {
	data, err := p.fs.inner.ReadFile(resolved)
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
		if err := p.scanValue(doc, false); err != nil {
			return err
		}
	}
}

func (p *preflight) scanValue(v any, isPath bool) error {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if err := p.scanValue(child, pathKeys[k]); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range v {
			if err := p.scanValue(child, isPath); err != nil {
				return err
			}
		}
	case string:
		if isPath {
			return p.checkConfigPath(v)
		}
	}
	return nil
}

func (p *preflight) checkConfigPath(v string) error {
	v = stripKey(v)
	switch {
	case isRemote(v) && !p.allowRemote:
		return fmt.Errorf("%s: %w", v, ErrRemoteRefused)
	case filepath.IsAbs(v):
		return fmt.Errorf("%s: %w", v, ErrAbsolutePath)
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
