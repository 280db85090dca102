/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package worker runs a git fetch or a kustomize build of a tenant's
// repository in a child process that the operating system bounds, so that
// no input can take the controller down with it: a stack overflow, a fatal
// error of the Go runtime, running out of memory or CPU end the worker, and
// fail only that fetch or build (a *DiedError).
//
// The controller re-executes its own binary with one fixed argument (Arg;
// no shell, nothing of the request on the command line) and sends
// requests on stdin. At its first, the worker sets its own limits:
// RLIMIT_DATA with a Go soft memory limit below it (the Go runtime
// respects both; RLIMIT_AS would count reserved address space, which the
// runtime maps far beyond its use), RLIMIT_CPU (its soft value, per
// request), RLIMIT_NOFILE,
// RLIMIT_FSIZE, and a maximum goroutine stack. With remote bases off it
// also refuses every HTTP request and finds no git binary: switches that
// are process-wide, and so could never be thrown in the controller, whose
// forge and git clients share them. The parent kills the worker at the
// request's deadline and reads its answer through a bounded reader.
//
// Pool runs at most Slots workers at once, one per tenant (namespace); a
// request that finds no free slot waits, and a worker killed frees its
// slot at once: nothing is left running. A worker that answered waits a
// minute for its tenant's next request, a fetch or a build (never another
// tenant's: what one request leaves in the process is its own tenant's
// concern only), so that a tenant's changes pay for no process start: the
// process is offline for each build with remote bases off and online again
// for a fetch, and nothing of one request runs during the next. It is
// retired after maxServes requests, and never kept once it died or left
// a process of its request running. Warm keeps started spares, half for fetches and half for
// builds (which warm kustomize up while they wait), for a tenant that has
// no idle worker.
//
// Off Linux, and for the CLI, builds and fetches run in-process
// (render.BuildContext, source.Fetch).
package worker
