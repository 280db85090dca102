/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package redact

import (
	"bytes"
	"encoding/base64"
	"iter"
	"path/filepath"
	"regexp"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// isManifest: a file kustomize may read as resources, patches or
// components.
func isManifest(name string) bool {
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// secretKind matches a kind of Secret as YAML (block or flow, plain or
// quoted, or behind a tag, an anchor, an alias, a comment, a block scalar
// indicator or a double-quoted line broken by an escaped newline) or JSON
// spells it;
// letterEscape, an escape that could spell it
// otherwise (YAML's \x, \u and \U in double quotes, JSON's \u). A
// manifest that matches neither, and has no NUL (UTF-16), holds no
// Secret: it is not parsed.
var (
	secretKind   = regexp.MustCompile(`(?i)kind["']?\s*:\s*(["']?secret\b|[!&*|>#]|"[^"\n]*\\\r?\n)`)
	letterEscape = regexp.MustCompile(`\\[xuU]`)
)

func mayHoldSecrets(data []byte) bool {
	return secretKind.Match(data) || letterEscape.Match(data) || bytes.IndexByte(data, 0) >= 0
}

// manifest collects the values of the plain Secrets in the manifest at
// path: each value of data as written and decoded, each of stringData. A
// file that does not parse holds none kustomize could print.
func (sc *checkoutScan) manifest(path string) error {
	if err := sc.count(); err != nil {
		return err
	}
	data, err := sc.readManifest(path)
	if data == nil || !mayHoldSecrets(data) {
		return err
	}
	if sc.parsedManifests += len(data); sc.parsedManifests > maxParsedManifestBytes {
		return errScanBound
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			return nil // io.EOF, or what kustomize could not read either
		}
		if doc["kind"] == "Secret" {
			sc.secretValues(doc)
		}
		if sc.c.over {
			return errScanBound
		}
	}
}

// secretValues collects every string under one Secret's data (as
// written and decoded) and stringData, whatever their shape: kustomize
// prints a node of the wrong kind whole.
func (sc *checkoutScan) secretValues(doc map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		for s := range stringsIn(doc[field]) {
			sc.c.value("", s)
			if b, err := base64.StdEncoding.DecodeString(s); err == nil && field == "data" {
				sc.c.value("", string(b))
			}
		}
	}
}

// stringsIn yields the strings of a decoded YAML or JSON value.
func stringsIn(v any) iter.Seq[string] {
	return func(yield func(string) bool) { walkStrings(v, yield) }
}

func walkStrings(v any, yield func(string) bool) bool {
	switch v := v.(type) {
	case string:
		return yield(v)
	case map[string]any:
		for _, e := range v {
			if !walkStrings(e, yield) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !walkStrings(e, yield) {
				return false
			}
		}
	}
	return true
}

// readManifest is read, its bytes counted against the manifests' bound
// instead of the generator sources'.
func (sc *checkoutScan) readManifest(path string) ([]byte, error) {
	data, err := readInside(sc.root, path, maxManifestBytes-sc.manifestBytes)
	sc.manifestBytes += len(data)
	return data, err
}
