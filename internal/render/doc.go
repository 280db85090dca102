/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package render owns turning a Git tree into Kubernetes objects: it runs
// kustomize in-process inside a sandbox rooted at the repository (no path or
// symlink may leave it, no remote bases unless allowed, no exec or
// non-builtin plugins, no helm), stamps every object with the revision and
// source annotations, and returns the objects in apply order (objects.Sort).
//
// Build renders a directory of a checkout on disk; BuildRef renders any ref
// of a local repository straight from its object store, without a checkout.
package render
