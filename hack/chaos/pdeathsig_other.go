//go:build !linux

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pdeathsig_other.go: dieWithParent off Linux, which does nothing.

package main

// dieWithParent: only Linux has a parent-death signal; elsewhere only the
// signal handler stops the run.
func dieWithParent() {}
