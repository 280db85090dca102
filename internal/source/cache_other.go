//go:build !unix

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// cache_other.go: diskUsage off Unix, a file's size.

package source

import "io/fs"

// diskUsage is the disk space a file takes: its size, rounded up by the
// caller to a block.
func diskUsage(info fs.FileInfo) int64 { return info.Size() }
