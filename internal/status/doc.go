/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package status writes bg-gitops outcomes back to the commit that caused
// them, as commit statuses on Gitea, GitHub or GitLab.
//
// It owns what each commit must show: SyncDesired and RolloutDesired derive
// the statuses of a GitRepository's and a FlinkBlueGreenDeployment's
// commits from their status alone, and the records of what the forge has
// (MergeRecords, Intents, Unacknowledged). And it owns how a forge is told:
// the forge clients (one small Provider interface), the status
// contexts and state words, description limits, revision → SHA parsing, the
// classification of forge errors (unauthorized, not found, rate limited,
// transient) and Sync, the level-triggered step the controllers call: read
// the commit's statuses, post only what is missing, report what the forge
// has acknowledged. Sync never posts a status identical to the current one,
// so a restart or a lost response cannot produce duplicates.
package status
