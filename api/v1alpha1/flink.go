/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flink.go: the GroupVersionKinds of the Flink Kubernetes Operator objects a
// FlinkBlueGreenDeployment writes (FlinkDeployment, FlinkStateSnapshot).

package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// Kinds of the Flink Kubernetes Operator that a FlinkBlueGreenDeployment
// writes: one FlinkDeployment per colour, a FlinkStateSnapshot per savepoint.
var (
	FlinkDeploymentGVK    = schema.GroupVersionKind{Group: "flink.apache.org", Version: "v1beta1", Kind: "FlinkDeployment"}
	FlinkStateSnapshotGVK = schema.GroupVersionKind{Group: "flink.apache.org", Version: "v1beta1", Kind: "FlinkStateSnapshot"}
)
