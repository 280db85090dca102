//go:build tools

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package tools pins Gitea.
package tools

import _ "code.gitea.io/gitea"
