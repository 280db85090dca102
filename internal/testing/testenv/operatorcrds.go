/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// operatorcrds.go: OperatorCRD, the path of one of the Flink Kubernetes
// Operator's real CRDs.

package testenv

import (
	"path/filepath"
	"runtime"
)

// OperatorCRD returns the path of one of the Flink Kubernetes Operator's
// real CRDs kept in operatorcrds/, by kind in lower case plural:
// "flinkdeployments", "flinkstatesnapshots", "flinkbluegreendeployments".
func OperatorCRD(plural string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "operatorcrds", plural+".flink.apache.org-v1.yml")
}
