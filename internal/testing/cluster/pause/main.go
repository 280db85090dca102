/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command pause is the sandbox image of the test cluster
// (internal/testing/cluster): it holds a pod's namespaces until it is told
// to stop, as registry.k8s.io/pause does, without a registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
