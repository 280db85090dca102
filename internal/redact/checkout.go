/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// checkout.go: Registry.NoteBuild and the scan of a failed build's checkout
// for the values its secretGenerators read, within the scan's bounds.

package redact

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/kustomize/api/konfig"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// Bounds of the scan of a checkout whose build failed, which runs at
// every poll, outside the render's sandbox and limits. Past any of them
// the scan stops and the GitRepository's messages are withheld until a
// build succeeds: a value not read is a value not scrubbed.
const (
	// maxScannedEntries is 5 times, maxScannedFiles once, the files of a
	// checkout within the source's limits (source.DefaultMaxFiles).
	maxScannedEntries = 50000 // directory entries walked
	maxScannedFiles   = 10000 // kustomizations read, generator sources named
	// maxScannedFileBytes: a larger source cannot become a Secret (the
	// API server takes 1 MiB at most); a larger kustomization is no
	// ordinary one.
	maxScannedFileBytes = 1 << 20
	// maxScannedBytes: a quarter of a build's reads (render.DefaultMaxBytes,
	// 32 MiB), dozens of realistic generator files (keys, certificates,
	// keystores); it keeps the scan's reads at about a tenth of a second and
	// its transient memory (the spellings of the file at hand) small.
	maxScannedBytes = 8 << 20
	// maxParsedFileBytes and maxParsedBytes bound the kustomizations
	// parsed (only those that may generate Secrets are): a flow list
	// costs about 190 times its bytes to parse (measured: 1 MiB, 186 MiB
	// allocated, half a second), an ordinary kustomization a few KiB.
	maxParsedFileBytes = 256 << 10
	maxParsedBytes     = 1 << 20
	// maxManifestBytes and maxParsedManifestBytes bound the manifests
	// read (YAML and JSON files other than kustomizations: a build's
	// reads, render.DefaultMaxBytes) and those parsed (only those that
	// may hold a Secret are).
	maxManifestBytes       = 32 << 20
	maxParsedManifestBytes = 2 << 20
)

// errScanBound: the scan hit one of its bounds.
var errScanBound = errors.New("checkout scan over its bounds")

// NoteBuild records what a GitRepository's build can reveal: the Secrets
// of the rendered set when it succeeded; when it failed, the values its
// kustomizations generate Secrets from (kustomize quotes them in its
// errors: a literal written "password:s3cret" instead of
// "password=s3cret" comes back whole in "invalid literal source"), and
// those of the plain Secrets in its manifests (kustomize prints the node
// it could not use, or a whole object without a name).
func (s *Registry) NoteBuild(source types.NamespacedName, dir string, objs []*unstructured.Unstructured, err error) {
	if s == nil {
		return
	}
	if err == nil {
		s.NoteRendered(source, objs)
		s.noteGenerated(source, nil)
		return
	}
	s.noteGenerated(source, newRecord(generatorValues(dir)))
}

// generatorValues collects the forms of the values every secretGenerator
// of the kustomizations under root generates from: each literal (whole,
// and its value), each line of its env sources (whole, and its value), the
// contents of its files sources (whole, and line by line), read only
// inside root, each file once per use. It runs only after a failed build,
// within the bounds above; past them the collector is over.
func generatorValues(root string) *collector {
	c := newCollector()
	if root == "" {
		return c
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return c
	}
	sc := &checkoutScan{root: real, c: c, seen: map[string]bool{}}
	entries := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		entries++
		switch {
		case entries > maxScannedEntries:
			return errScanBound
		case err != nil:
			return nil
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case isKustomizationFile(d.Name()):
			return sc.kustomization(path)
		case isManifest(d.Name()):
			return sc.manifest(path)
		}
		return sc.otherFile(path)
	})
	if err != nil {
		c.overflow()
	}
	return c
}

// checkoutScan is the state of one generatorValues.
type checkoutScan struct {
	root         string // resolved
	c            *collector
	seen         map[string]bool // use and resolved path of each source read
	files, bytes int
	parsed       int // bytes of kustomizations
	// manifestBytes and parsedManifests count the manifests read and
	// parsed.
	manifestBytes, parsedManifests int
}

func isKustomizationFile(name string) bool {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if name == n {
			return true
		}
	}
	return false
}

// kustomization collects the values of the secretGenerators of the
// kustomization at path. Each is read: a kustomization linked into
// several directories names its sources relative to each.
func (sc *checkoutScan) kustomization(path string) error {
	if err := sc.count(); err != nil {
		return err
	}
	data, err := sc.read(path)
	if data == nil || !mayGenerateSecrets(data) {
		return err
	}
	if sc.parsed += len(data); len(data) > maxParsedFileBytes || sc.parsed > maxParsedBytes {
		return errScanBound
	}
	var k kustypes.Kustomization
	if yaml.Unmarshal(data, &k) != nil {
		return nil
	}
	k.FixKustomization()
	for _, g := range k.SecretGenerator {
		if err := sc.generator(filepath.Dir(path), g.KvPairSources); err != nil {
			return err
		}
	}
	return nil
}

// mayGenerateSecrets: a kustomization that does not spell
// secretGenerator in ASCII letters of any case (keys match fields
// regardless of case, and "ſ" folds to "s"), with no escape, tag or NUL
// (UTF-16) that could spell it otherwise, generates no Secret: it is not
// parsed.
func mayGenerateSecrets(data []byte) bool {
	return bytes.Contains(bytes.ToLower(data), []byte("ecretgenerator")) || bytes.ContainsAny(data, "\\!\x00")
}

func (sc *checkoutScan) generator(dir string, src kustypes.KvPairSources) error {
	for _, lit := range src.LiteralSources {
		sc.c.value("", lit)
		if _, v, ok := strings.Cut(lit, "="); ok {
			sc.c.value("", strings.Trim(v, `"'`))
		}
	}
	for _, env := range src.EnvSources {
		data, err := sc.source("env", filepath.Join(dir, env))
		if err != nil {
			return err
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			_, v, _ := strings.Cut(line, "=")
			if !sc.c.value("", line) || !sc.c.value("", v) {
				return errScanBound
			}
		}
	}
	for _, file := range src.FileSources {
		if _, p, ok := strings.Cut(file, "="); ok {
			file = p
		}
		data, err := sc.source("file", filepath.Join(dir, file))
		if err != nil {
			return err
		}
		sc.c.value("", string(data))
	}
	if sc.c.over {
		return errScanBound
	}
	return nil
}

// source reads a generator source, unless read before for the same use
// (a file named 60 times is read once): nil then.
func (sc *checkoutScan) source(use, path string) ([]byte, error) {
	if err := sc.count(); err != nil || sc.c.over {
		return nil, errScanBound
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil || sc.seen[use+"\x00"+real] {
		return nil, nil
	}
	sc.seen[use+"\x00"+real] = true
	return sc.read(real)
}

func (sc *checkoutScan) count() error {
	if sc.files++; sc.files > maxScannedFiles {
		return errScanBound
	}
	return nil
}

// read reads a regular file at path, which must resolve (symbolic links
// followed) inside the checkout; nil when it does not. Its bytes count
// against the scan's bounds, errScanBound past them.
func (sc *checkoutScan) read(path string) ([]byte, error) {
	data, err := readInside(sc.root, path, min(maxScannedFileBytes, maxScannedBytes-sc.bytes))
	sc.bytes += len(data)
	return data, err
}

// resolveInside is path with symbolic links resolved, when it resolves
// inside root.
func resolveInside(root, path string) (string, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return real, true
}

// readInside reads a regular file at path that resolves inside root, nil
// when it does not; errScanBound when it is larger than room.
func readInside(root, path string, room int) ([]byte, error) {
	real, ok := resolveInside(root, path)
	if !ok {
		return nil, nil
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	if fi.Size() > int64(room) {
		return nil, errScanBound
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(room)+1))
	if err != nil {
		return nil, nil
	}
	if len(data) > room {
		return nil, errScanBound // it grew
	}
	return data, nil
}
