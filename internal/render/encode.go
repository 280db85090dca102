/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// encode.go: EncodeYAML, objects as multi-document YAML with sorted keys.

package render

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/objects"
)

// EncodeYAML writes objects as multi-document YAML in the given order; keys
// are sorted, so equal objects always encode to equal bytes.
func EncodeYAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var buf bytes.Buffer
	for i, u := range objs {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", objects.ID(u), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}
