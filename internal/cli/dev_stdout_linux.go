//go:build linux && !nodev

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// dev_stdout_linux.go: readerGone, which polls whether the reader of
// `bg-gitops dev`'s output is gone.

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// readerGone reports whether f is a pipe or socket whose reading end is
// closed: poll then reports POLLERR (a pipe) or POLLHUP (a socket, a
// terminal hung up). A regular file never does.
func readerGone(f *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: 0}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
