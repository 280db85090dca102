/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// skip.go: the suite's one skip policy: ErrBinaryMissing, UnderCI,
// Skippable and Require.

package testenv

import (
	"errors"
	"os"
	"testing"
)

// ErrBinaryMissing means a test component (kube-apiserver, etcd, Gitea) is
// not in bin/; `make tools` builds them.
var ErrBinaryMissing = errors.New("test binary missing (run 'make tools')")

// UnderCI reports whether the tests run under CI (the CI environment
// variable is set to anything but "" or "false"). Under CI no test skips.
func UnderCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false"
}

// Skippable reports whether err may skip a test rather than fail it: only a
// missing binary, and only outside CI. The one skip policy of the suite.
func Skippable(err error) bool {
	return errors.Is(err, ErrBinaryMissing) && !UnderCI()
}

// Require stops t when err is not nil: a skip when Skippable(err), a
// failure otherwise (a port clash, a timeout under load, any binary
// missing under CI).
func Require(t testing.TB, err error) {
	t.Helper()
	switch {
	case err == nil:
	case Skippable(err):
		t.Skip(err)
	default:
		t.Fatal(err)
	}
}
