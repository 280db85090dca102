/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// crds.go: CRDs and FlinkCRDs, the CustomResourceDefinitions a test
// installs.

package testenv

import (
	"embed"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/config"
)

//go:embed crds/*.yaml
var flinkCRDs embed.FS

// CRDs returns the bggitops.dev CRDs and, when withFlink, the Flink test CRDs.
func CRDs(withFlink bool) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := readCRDs(config.CRDs, "crd/bases")
	if err != nil || !withFlink {
		return out, err
	}
	flink, err := FlinkCRDs()
	return append(out, flink...), err
}

// FlinkCRDs returns the Flink test CRDs (FlinkDeployment, FlinkStateSnapshot).
func FlinkCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return readCRDs(flinkCRDs, "crds")
}

func readCRDs(fsys fs.FS, dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		data, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("parse %s: %w", e.Name(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}
