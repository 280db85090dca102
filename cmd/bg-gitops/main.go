/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command bg-gitops is the bg-gitops controller and its command line.
package main

import (
	"os"

	"bggitops.dev/bg-gitops/internal/cli"
)

func main() {
	os.Exit(cli.Execute())
}
