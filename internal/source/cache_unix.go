//go:build unix

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// cache_unix.go: diskUsage on Unix, the blocks a file takes.

package source

import (
	"io/fs"
	"syscall"
)

// diskUsage is the disk space a file takes: its blocks, or its size where
// the file system does not say.
func diskUsage(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}
