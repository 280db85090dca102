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
//
// # Nothing leaves the repository
//
// With Options.AllowRemoteBases off, a build reads the repository and
// nothing else. Before kustomize runs, a preflight walks every
// kustomization of the build and refuses, naming the field and the file,
// every string that kustomize could fetch: kustomize's loader GETs any path
// with an http(s) scheme with a plain http.Client and has no option or hook
// to stop it, so the check does not depend on a list of fields. Every
// string of every kustomization, and of every generator, transformer and
// validator config (inline, in a file, or built by a kustomization
// directory, checked as that directory builds), that starts like a URL is
// refused, except under the keys kustomize only treats as data
// (annotations, commonAnnotations, literals, value).
//
// With remote bases on, kustomize's clones are read through the same
// sandbox, rooted at the clone (a symlink out of it is refused) and only by
// the build that cloned them; file:// remote bases need
// Options.AllowFileURLs (they would clone any repository on the
// controller's disk); a remote kustomization may not set an openapi schema.
//
// # Limits
//
// Every build is bounded, so that one repository cannot stall or exhaust
// the controller that renders all of them. Zero Options fields mean:
//
//	Timeout       30s     wall clock, waiting for other builds included
//	MaxFileReads  2000    file reads; a file read n times counts n times
//	MaxBytes      32 MiB  bytes of all reads, counted the same way, YAML
//	                      aliases as expanded
//	MaxObjects    2000    objects rendered
//
// A negative value is no limit. A build over a limit fails with a
// *LimitError (errors.Is ErrLimitExceeded) naming the limit and its value.
// The reads are counted in the sandbox as kustomize makes them, so a build
// that includes a base over and over (2^n objects from 3n files) stops at
// the limit, not after rendering. Build returns at the deadline even when
// kustomize is stuck where the sandbox cannot see it (a remote base that
// never answers); the abandoned run fails at its next file operation.
// Copies in JSON patches are capped at 2 MiB per patch and object.
// Not bounded: the bytes kustomize itself fetches or clones for remote
// bases (only the time), and memory a build within these limits can still
// take (a patch applied to every object multiplies them).
//
// # Concurrency
//
// kustomize keeps one OpenAPI schema per process and krusty sets it on
// every run. Builds whose kustomizations have no openapi field leave it at
// kyaml's default, already parsed, and run concurrently; a build with an
// openapi field runs alone and puts the default back (schema.go). A build
// waits for that at most until its own deadline.
package render
