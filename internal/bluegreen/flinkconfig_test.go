/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestFlinkConfigValueFlatOrNested(t *testing.T) {
	for conf, want := range map[string]string{
		`{"rest.port": "8082"}`:         "8082",
		`{"rest": {"port": 8083}}`:      "8083",
		`{"rest.address": "localhost"}`: "",
	} {
		spec := &v1alpha1.FlinkDeploymentSpec{FlinkConfiguration: &apiextensionsv1.JSON{Raw: []byte(conf)}}
		if got, _ := FlinkConfigValue(spec, "rest.port"); got != want {
			t.Errorf("%s: got %q, want %q", conf, got, want)
		}
	}
	if _, ok := FlinkConfigValue(&v1alpha1.FlinkDeploymentSpec{}, "rest.port"); ok {
		t.Error("no flinkConfiguration has no value")
	}
}
