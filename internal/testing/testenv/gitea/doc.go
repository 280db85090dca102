/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package gitea runs a real Gitea forge on 127.0.0.1 for tests and the local
// demo environment: it writes an app.ini into a private directory, migrates
// the sqlite database, creates an admin user and an API token, serves
// `gitea web`, and offers the few API calls tests need (create a repository,
// add a push webhook, read commit statuses back).
//
// The package owns the Gitea process: it is started by PID, stopped by PID
// (SIGTERM, then SIGKILL after a timeout) and, on Linux, killed by the kernel
// when the parent dies, so no process outlives the test or the demo.
package gitea
