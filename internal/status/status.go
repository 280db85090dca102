/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// status.go: the provider-neutral vocabulary — State, Entry, the Provider
// interface, and the sync and rollout contexts.

package status

import (
	"context"
	"strings"
)

// State is the provider-neutral outcome of a sync or rollout.
type State string

// The states bg-gitops reports; each provider maps them to its own words.
const (
	StatePending State = "pending"
	StateSuccess State = "success"
	StateFailure State = "failure"
)

// Entry is one commit status on a commit: context, state, description, link.
type Entry struct {
	// Context identifies the reporter; see SyncContext and RolloutContext.
	Context     string
	Description string
	TargetURL   string
	State       State
}

// Provider reads and writes the commit statuses of one repository.
type Provider interface {
	// List returns the statuses currently on the commit: at least the
	// latest one per context.
	List(ctx context.Context, sha string) ([]Entry, error)
	// Post adds a status to the commit.
	Post(ctx context.Context, sha string, s Entry) error
}

// SyncContext is the context of a GitRepository's sync status.
func SyncContext(namespace, name string) string {
	return "bg-gitops/sync/" + namespace + "/" + name
}

// rolloutPrefix starts every rollout context.
const rolloutPrefix = "bg-gitops/rollout/"

// RolloutContext is the context of a FlinkBlueGreenDeployment's rollout.
func RolloutContext(namespace, name string) string {
	return rolloutPrefix + namespace + "/" + name
}

func isRolloutContext(c string) bool { return strings.HasPrefix(c, rolloutPrefix) }
