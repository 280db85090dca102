//go:build nodev

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Builds with the nodev tag (the controller image) have no `bg-gitops dev`.

package cli

import "github.com/spf13/cobra"

// devCommands is empty in a build with the nodev tag: the controller image
// carries no local environment.
func devCommands() []*cobra.Command { return nil }
