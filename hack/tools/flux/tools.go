//go:build tools

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package tools pins Flux's source-controller and kustomize-controller,
// which the scenario benchmarks run next to bg-gitops (bench/flux_test.go).
package tools

import (
	_ "github.com/fluxcd/kustomize-controller"
	_ "github.com/fluxcd/source-controller"
)
