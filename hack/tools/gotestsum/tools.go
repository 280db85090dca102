//go:build tools

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package tools pins gotestsum, which runs `make test` and prints the
// number of passed, skipped and failed tests at the end.
package tools

import _ "gotest.tools/gotestsum"
