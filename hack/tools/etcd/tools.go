//go:build tools

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package tools pins etcd for the test control plane.
package tools

import _ "go.etcd.io/etcd/server/v3"
