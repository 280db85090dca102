/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package objects owns what render, apply and `bg-gitops diff --cluster`
// must agree on about a set of Kubernetes objects: how an object is
// identified (Key, ID), the order a set is applied in (Sort), which
// identities repeat (Duplicates), whether a kind is namespaced (Scope), how
// bg-gitops writes an object (FieldManager, Apply) and what counts as drift
// between a live object and the dry-run answer of applying Git's version
// (Normalize, Drifted).
package objects
