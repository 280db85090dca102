//go:build tools

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package tools pins controller-gen.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
