/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkconfig.go: FlinkConfigValue, a key's value in a spec's
// flinkConfiguration, spelled flat or nested.

package bluegreen

import (
	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// FlinkConfigValue is the value of key ("rest.port") in spec's
// flinkConfiguration, spelled flat or nested, as Flink reads it.
func FlinkConfigValue(spec *v1alpha1.FlinkDeploymentSpec, key string) (string, bool) {
	v, ok := flattenTemplate(spec)["flinkConfiguration."+key]
	return v, ok
}
