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
//	Timeout       30s      wall clock, waiting for other builds included
//	MaxFileReads  2000     file reads; a file read n times counts n times
//	MaxBytes      32 MiB   bytes of all reads, counted the same way, YAML
//	                       aliases as expanded
//	MaxObjects    2000     objects read and rendered
//	MaxNodes      200,000  YAML nodes of all reads, counted the same way
//
// A negative value is no limit. A build over a limit fails with a
// *LimitError (errors.Is ErrLimitExceeded) naming the limit and its value.
//
// Everything is counted in the sandbox as kustomize reads, and charged
// before kustomize sees the file: kustomize does its expensive work (many
// objects, whose handling grows with their square; parsing) with no file
// operation in between, so anything counted after it would come minutes
// late. A build that includes a base over and over (2^n objects from 3n
// files) stops at the read limits. Objects are bounded from the text of
// each file read (fileObjects): every document, every item of a List
// however nested or written (JSON on one line included), every ConfigMap
// and Secret a kustomization generates, every document of a patch or a
// plugin config; a fuzz test holds the count against kustomize's own
// factory. YAML nodes are estimated without parsing (yamlNodes, fuzzed
// against go-yaml) and are what kustomize's memory grows with, at about
// half a KiB each: text that is only text (a block or quoted string under
// a key) counts one node per 64 bytes, a file the build reads only as a
// generator's data counts only as text, and the shapes whose cost grows
// with their square (a mapping with thousands of keys, deep nesting) count
// more. Measured with the defaults (BenchmarkWorstFileWithinLimits), the
// worst file within the limits (a flow or block list of scalars) peaks at
// 105-120 MiB of heap, 8 MiB of text at 70-95 MiB, and 1,400 realistic
// Deployments at about 75 MiB (sampled peaks, run to run); 2,000
// Deployments need MaxNodes at about 290,000 and take about 110 MiB. Bytes alone would not bound
// memory (the same 256 KiB cost 3 MiB as a string and 140 MiB as a flow
// list), which is why there is no cap per file below the source's 8 MiB.
//
// A YAML alias inside the node its anchor names (x: &a [*a]) makes
// kustomize recurse until the stack overflows, which kills the process: it
// is refused (ErrAliasCycle), in files and in strings kustomize parses
// again. Copies in JSON patches are capped at 2 MiB per patch and object.
//
// A patch or replacement applied to many objects counts once per object
// (fanout.go): kustomize copies a patch into every object its target
// selects, and a replacement's value into every field its targets select
// (every matching item, for a field path with * or [name=x]), with no
// file read in between (one patch of 20,000 list items on 150 ConfigMaps
// took 1.2 GiB; a value of 2,000 items copied into 2,000 items of one
// object, 4 GiB). Each patch with a target is charged its nodes and bytes
// once per object read after the kustomization that names it (a
// component's, once per object of the build), and applying it, which walks
// the object, a node per 16 nodes of those objects; a patch without a
// target walks one object, the largest document read; a kustomization's
// labels and annotations count four times per object (the default places),
// and once more, at four nodes a label, per place that the fieldSpecs its
// configurations files and labels entries add reach in the objects read
// (fanout_labels.go: kustomize writes every label into every item of every
// list on a fieldSpec's path, [] or not; 700 labels into 700 items took a
// GiB). The fieldSpecs of a builtin LabelTransformer, AnnotationsTransformer,
// PrefixSuffixTransformer, PrefixTransformer, SuffixTransformer or
// NamespaceTransformer config count the same way. The places are measured
// in every object read (at most 64 paths; beyond, a path counts every node
// read as a place): the worst such build within the defaults peaks at
// about 90 MiB. A replacement's
// value is the largest the build's objects hold at its source path (the
// preflight collects the paths and every object read is measured there),
// or the largest value a generator makes, copied once per object and plain
// field path and once per field a wildcard path matches in the objects
// read. All of it is charged at the reads of the objects it may reach,
// which come before kustomize's transform stage, against the node and byte
// limits: a build over them fails there with the limit named, before
// kustomize applies anything. P patches on N objects, which kept kustomize
// computing for minutes with no file operation, are bounded the same way
// (at most about 16 s of applying patches within the default limits; 6 s
// at most, measured). The price: 1,000 realistic Deployments with five
// patches that target all of them (5 s for kustomize to apply) need
// MaxNodes at about 320,000.
//
// Not bounded: the bytes kustomize itself fetches for remote bases (HTTP
// files are not read through the sandbox, so their objects and nodes count
// only once rendered, and a patch or replacement file fetched over HTTP not
// at all; only the time bounds them; the patches and replacements of a
// cloned kustomization count, a replacement's value as the largest document
// read); a replacement whose source an earlier replacement grew (it counts
// what was read there, plus what patches may add); what a replacement
// writes into a string that holds YAML or JSON (kustomize parses the
// string for each target and field path); vars; labels kustomize writes
// into lists through its default fieldSpecs (a NetworkPolicy's rules, a
// StatefulSet's volumeClaimTemplates); a configurations fieldSpec's kind
// (every object is measured at its path, an over-count); the fieldSpecs of
// configurations for images, replicas and name references; and a
// configurations file or transformer config fetched over HTTP or built from
// a directory with remote bases on (its fieldSpecs are not seen).
//
// # Time, and builds that overrun
//
// Build returns at the deadline even when kustomize is stuck where the
// sandbox cannot see it (a remote base that never answers) or computes
// with no file operation. Its goroutine cannot be stopped: it fails at its
// next file operation; what it computes in between is what the limits
// charged before (the patches and replacements above). At most two
// kustomize goroutines run at once in the process (running.go), abandoned
// ones included until kustomize really returns, and at most one of a
// tenant (Options.Tenant: the reconciler passes the GitRepository's
// namespace), so that one tenant's builds cannot take every place; a build
// waits for a place until its own deadline and then fails with a
// LimitError that is Waiting (a later attempt may succeed: callers retry
// only those). A build that overran its own time limit is not Waiting: it
// would take as long again, and each attempt would leave another goroutine
// running (the reconciler remembers it, and every other failure of the
// revision, until the next commit).
//
// # Concurrency
//
// kustomize keeps one OpenAPI schema per process and krusty sets it on
// every run. Builds whose kustomizations have no openapi field leave it at
// kyaml's default, already parsed, and run concurrently; a build with an
// openapi field runs alone and puts the default back (schema.go). A build
// waits for that at most until its own deadline. Past its deadline, an
// abandoned build leaves the gate at its next file operation (or at the
// deadline, if it is inside one), the schema build restoring the default
// schema first, so it holds others back only while kustomize computes on
// what it has read. A build that sets the schema may not use remote bases
// (ErrRemoteInSchemaBuild): a fetch has no file operation to stop at.
package render
