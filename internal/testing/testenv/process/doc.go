/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package process runs the servers of a test environment as child
// processes that can be killed, paused and started again with the same
// command line: the fault tests of internal/testing/chaos need etcd, kube-apiserver,
// controllers and the Flink operator simulator as real processes.
//
// Each process gets its own process group (its children are signalled with
// it) and, on Linux, a parent-death signal, so the kernel kills it when the
// test process dies however it dies. The parent-death signal fires when the
// thread that forked the child exits, not the process; every child is
// therefore forked from one OS thread that lives as long as the process.
//
// Every process group started is remembered: Leaks lists those that still
// have a member, so a caller can prove that nothing outlived it.
package process
