/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const examples = "../../examples/repo-layout"

// exampleOverlays lists the overlays of examples/repo-layout, so that a
// new overlay is checked by every test that walks them.
func exampleOverlays(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(examples, "overlays"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) < 3 {
		t.Fatalf("examples/repo-layout/overlays: want staging, production and production-s3, got %v", out)
	}
	return out
}

// writeTree creates files (path → content) under a new temporary directory;
// a value starting with "-> " makes a symlink to the rest of the value.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := cutPrefix(content, "-> "); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  key: value
`

func kustomization(resources ...string) string {
	s := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
	for _, r := range resources {
		s += "  - " + r + "\n"
	}
	return s
}

type unstructuredT = unstructured.Unstructured

var unstructuredNestedInt64 = unstructured.NestedInt64
