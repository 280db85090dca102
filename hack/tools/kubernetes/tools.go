//go:build tools

// Package tools pins the Kubernetes control-plane binaries used by tests.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
