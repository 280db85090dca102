/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// manifests.go: the part of the checkout scan that reads the values of plain
// Secret manifests.

package redact

import (
	"bytes"
	"encoding/base64"
	"io"
	"iter"
	"os"
	"path/filepath"
	"regexp"

	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// isManifest: a file named as kustomize's own resources, patches and
// components are. A kustomization may name a file of any other name
// (resources: [secret.txt]): see otherFile.
func isManifest(name string) bool {
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// otherFile is manifest for a file of another name, which kustomize
// reads as a manifest when a kustomization names it. One larger than
// maxScannedFileBytes, or binary (binaryFile), is skipped rather than a
// bound hit: a checkout's images and archives are no manifests anyone
// writes, and must not withhold every message.
func (sc *checkoutScan) otherFile(path string) error {
	real, ok := resolveInside(sc.root, path)
	if !ok {
		return nil
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxScannedFileBytes || binaryFile(real) {
		return nil
	}
	return sc.manifest(real)
}

// binaryFile reports a NUL in the first 8000 bytes of the file at path
// (git's test), unless it starts with a UTF-16 byte order mark: YAML
// allows no NUL otherwise, so kustomize reads no object from it.
func binaryFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head := make([]byte, 8000)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	utf16 := bytes.HasPrefix(head, []byte{0xff, 0xfe}) || bytes.HasPrefix(head, []byte{0xfe, 0xff})
	return !utf16 && bytes.IndexByte(head, 0) >= 0
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
	nodes, err := kio.FromBytes(data)
	if err != nil {
		return nil // what kustomize cannot read either: it quotes no node
	}
	for _, n := range nodes {
		if n.GetKind() == "Secret" { // the first kind key, as kustomize reads it
			sc.secretValues(n)
		}
		if sc.c.over {
			return errScanBound
		}
	}
	return nil
}

// secretValues collects every string under one Secret's data (as
// written and decoded) and stringData, whatever their shape: kustomize
// prints a node of the wrong kind whole. Aliases are not followed (their
// anchors are collected where they stand, and an alias is printed as one).
func (sc *checkoutScan) secretValues(n *kyaml.RNode) {
	for _, field := range []string{"data", "stringData"} {
		f := n.Field(field)
		if f == nil {
			continue
		}
		for s := range scalarsIn(f.Value.YNode()) {
			sc.c.value("", s)
			if b, err := base64.StdEncoding.DecodeString(s); err == nil && field == "data" {
				sc.c.value("", string(b))
			}
		}
	}
}

// scalarsIn yields the scalar values under y (not mapping keys).
func scalarsIn(y *kyaml.Node) iter.Seq[string] {
	return func(yield func(string) bool) { walkScalars(y, yield) }
}

func walkScalars(y *kyaml.Node, yield func(string) bool) bool {
	if y == nil {
		return true
	}
	if y.Kind == kyaml.ScalarNode {
		return yield(y.Value)
	}
	for i, c := range y.Content {
		if y.Kind == kyaml.MappingNode && i%2 == 0 {
			continue // a key
		}
		if !walkScalars(c, yield) {
			return false
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
