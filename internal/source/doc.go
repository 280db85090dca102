/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package source owns everything between a GitRepository and a checked-out
// commit on disk: credentials from the Secret, resolving the ref with a remote
// listing, the shallow fetch into the GitRepository's directory of the Cache,
// the revision string (<ref>@sha1:<hex>), the poll schedule, and the push
// webhook receiver that asks for an immediate reconcile.
//
// The Cache keeps the directories not in use within a byte budget
// (--git-max-cache-size), evicting the least recently used ones, whose
// repositories are fetched afresh at their next reconcile. It also remembers
// the commit each directory holds checked out (Cache.CheckedOut), which Poll
// trusts when given it (Options.CheckedOut): a poll of an unchanged ref reads
// nothing on disk.
//
// Every fetch is bounded (Limits: bytes received, object and file sizes,
// checkout size, number of files; Options.Timeout for time) and follows a
// URL policy (no file:// and no credentials over http:// unless the
// controller allows them), because one controller fetches every tenant's
// repositories into one cache.
//
// Git is spoken through go-git only; nothing here shells out.
package source
