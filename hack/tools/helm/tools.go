//go:build tools

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package tools pins Helm, whose `helm template` renders charts/bg-gitops
// in the tests that check the chart against config/default.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
