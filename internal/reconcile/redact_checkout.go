/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
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

// Bounds of the scan of a checkout whose build failed.
const (
	maxScannedEntries   = 50000
	maxScannedFileBytes = 1 << 20
)

// noteBuild records what a GitRepository's build can reveal: the Secrets
// of the rendered set when it succeeded; when it failed, the values its
// kustomizations generate Secrets from (kustomize quotes them in its
// errors: a literal written "password:s3cret" instead of
// "password=s3cret" comes back whole in "invalid literal source").
func (s *secretRegistry) noteBuild(source types.NamespacedName, dir string, objs []*unstructured.Unstructured, err error) {
	if err == nil {
		s.noteRendered(source, objs)
		s.noteGenerated(source, nil)
		return
	}
	s.noteGenerated(source, generatorValues(dir))
}

func (s *secretRegistry) noteGenerated(source types.NamespacedName, forms []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(forms) == 0 {
		delete(s.generated, source)
		return
	}
	s.generated[source] = forms
}

// generatorValues are the forms of the values every secretGenerator of
// the kustomizations under root generates from: each literal (whole, and
// its value), and the contents of its env and files sources (whole, and
// line by line), read only inside root. The scan is bounded; it runs only
// after a failed build.
func generatorValues(root string) []string {
	if root == "" {
		return nil
	}
	var forms []string
	entries := 0
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		entries++
		switch {
		case err != nil:
			return nil
		case entries > maxScannedEntries:
			return filepath.SkipAll
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir() || !isKustomizationFile(d.Name()):
			return nil
		}
		data, ok := readInside(root, path)
		if !ok {
			return nil
		}
		var k kustypes.Kustomization
		if yaml.Unmarshal(data, &k) != nil {
			return nil
		}
		k.FixKustomization()
		for _, g := range k.SecretGenerator {
			forms = append(forms, sourceValues(root, filepath.Dir(path), g.KvPairSources)...)
		}
		return nil
	})
	return forms
}

func isKustomizationFile(name string) bool {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if name == n {
			return true
		}
	}
	return false
}

func sourceValues(root, dir string, src kustypes.KvPairSources) []string {
	var forms []string
	for _, lit := range src.LiteralSources {
		forms = append(forms, valueForms(lit)...)
		if _, v, ok := strings.Cut(lit, "="); ok {
			forms = append(forms, valueForms(strings.Trim(v, `"'`))...)
		}
	}
	for _, env := range src.EnvSources {
		data, ok := readInside(root, filepath.Join(dir, env))
		if !ok {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			forms = append(forms, valueForms(line)...)
			if _, v, ok := strings.Cut(line, "="); ok {
				forms = append(forms, valueForms(v)...)
			}
		}
	}
	for _, file := range src.FileSources {
		if _, p, ok := strings.Cut(file, "="); ok {
			file = p
		}
		if data, ok := readInside(root, filepath.Join(dir, file)); ok {
			forms = append(forms, valueForms(string(data))...)
		}
	}
	return forms
}

// readInside reads a regular file at path, which must resolve (symbolic
// links followed) inside root, up to maxScannedFileBytes.
func readInside(root, path string) ([]byte, bool) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, false
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, false
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxScannedFileBytes))
	return data, err == nil || errors.Is(err, io.EOF)
}
