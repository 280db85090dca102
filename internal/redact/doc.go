/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package redact keeps Secret values out of every message the controller
// publishes: a Registry records the values of the Secrets the controller
// reads and of those a GitRepository renders (and, after a failed build,
// what its secretGenerators read), by where they live, and hands out the
// Scrubber of the messages about an object, which replaces those values in
// every spelling an error may use. A controller keeps one Registry and
// injects it into its reconcilers, its commit status reporter and its
// webhook receiver.
package redact
