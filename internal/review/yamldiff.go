/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// yamldiff.go: yamlDiff, a unified diff of two objects' YAML.

package review

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// yamlDiff is a unified diff of the two objects' YAML (keys sorted), hunks
// only: the file header would repeat the object's name.
func yamlDiff(base, head *unstructured.Unstructured) (string, error) {
	a, err := yaml.Marshal(base.Object)
	if err != nil {
		return "", fmt.Errorf("encode base: %w", err)
	}
	b, err := yaml.Marshal(head.Object)
	if err != nil {
		return "", fmt.Errorf("encode head: %w", err)
	}
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(a)), B: difflib.SplitLines(string(b)), Context: diffContext,
		FromFile: "base", ToFile: "head",
	})
	if err != nil {
		return "", err
	}
	return stripHeader(out), nil
}

func stripHeader(d string) string {
	lines := strings.SplitAfter(d, "\n")
	for len(lines) > 0 && (strings.HasPrefix(lines[0], "--- ") || strings.HasPrefix(lines[0], "+++ ")) {
		lines = lines[1:]
	}
	return strings.Join(lines, "")
}
