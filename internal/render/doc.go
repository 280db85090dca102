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
// Every build is bounded, so that one repository cannot stall the
// controller or make it read without end. Zero Options fields mean:
//
//	Timeout       30s      wall clock, waiting for a free build slot included
//	MaxFileReads  2000     file reads; a file read n times counts n times
//	MaxBytes      32 MiB   bytes of all reads, counted the same way
//	MaxObjects    2000     objects rendered
//
// A negative value is no limit. A build over a limit fails with a
// *LimitError (errors.Is ErrLimitExceeded) naming the limit and its value.
//
// File reads and bytes are counted in the sandbox as kustomize reads, and
// charged before kustomize sees the file (one larger than what is left is
// never read into memory), so a build that includes a base over and over
// (2^n objects from 3n files) stops at the read limits. Objects are
// counted in kustomize's output: the limit bounds what a caller gets, not
// what kustomize holds while it runs. What kustomize fetches itself for a
// remote base over HTTP is not read through the sandbox: only the time and
// the objects it renders bound it.
//
// Nothing else is bounded in process. What kustomize makes of what it read
// (its memory: a YAML alias expanded, a patch copied into many objects; its
// CPU; its stack: an alias inside its own anchor recurses without end) is
// the worker process's to bound: the controller on Linux runs every build
// in a worker (internal/worker) whose memory (RLIMIT_DATA), CPU time
// (RLIMIT_CPU) and stack the OS limits and which is killed at the
// deadline; a worker over one ends and fails only its own build
// (LimitMemory, LimitCPU, LimitStack). A build in process (bg-gitops build and
// diff, a controller off Linux) has only the limits above and the sandbox.
//
// # Time
//
// Build returns at the deadline even when kustomize is stuck where the
// sandbox cannot see it (a remote base that never answers) or computes
// with no file operation: kustomize runs on its own goroutine, which
// cannot be stopped; it fails at its next file operation, and what it
// computes until then is not bounded in process. A build that overran its
// own time limit is not Waiting: it would take as long again (the
// reconciler remembers it, and every other failure of the revision, until
// the next commit).
//
// # Concurrency
//
// kyaml keeps one OpenAPI schema per process: krusty sets it on every run,
// a kustomization's openapi field replaces it, and kyaml parses it lazily
// into plain maps that two builds would race on. So in one process at most
// one kustomize goroutine runs at a time (kustomizeSlot), holding its slot
// until kustomize really returns: a build abandoned at its deadline keeps
// the next one waiting until its goroutine ends. A build with an openapi
// field puts the default schema back before it lets go of the slot. A
// build that cannot take the slot before its deadline fails with a
// LimitError that is Waiting (a later attempt may succeed: callers retry
// only those). Builds run side by side only in worker processes, a few at
// a time and one per tenant (internal/worker.Pool, Options.Tenant).
package render
