//go:build !linux && !nodev

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// dev_stdout_other.go: readerGone off Linux, always false.

package cli

import "os"

// readerGone is false: elsewhere a broken output is noticed at the next
// write only.
func readerGone(*os.File) bool { return false }
