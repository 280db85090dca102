//go:build tools

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package tools pins promtool, which checks and unit-tests the alerting
// rules of config/prometheus (TestMetricsRules).
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
