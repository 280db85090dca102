/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package bluegreen owns the blue/green rollout logic of a
// FlinkBlueGreenDeployment as pure functions, free of any Kubernetes client:
//
//   - Decide: the state machine (FLIP-503 states, timers and savepoint
//     handoff, plus the bg-gitops extensions: savepoint timeout, forward
//     finalisation, retry/abort/promote annotations, manual promotion,
//     rollout windows, revisions and conditions). It maps the observed
//     world (parent, children, snapshot, rollout window, clock) to the next
//     status and the actions that lead there, status.history (one entry
//     per rollout, history.go) and the active job's state included.
//   - Plan (on top of Classify): which rollout a spec change gets from an
//     active colour, shared by the controller and `bg-gitops diff`.
//   - WindowState and ParseFlinkDuration: the parsers of user input that
//     the decision depends on.
//
// A controller-runtime adapter executes a Decision: it runs the actions in
// order (server-side apply of children, deletes, FlinkStateSnapshot
// creation), then writes Decision.Status if it differs from the observed
// status, emits the events and requeues. Every decision is idempotent, so
// a crash between the actions and the status write repeats the same
// actions with the same names. The adapter's side of the contract:
//
//   - a decision that acts or changes the status is made on children read
//     from the API server, not from a cache that may not show the last
//     writes yet (a child at its previous generation looks ready);
//   - an action the API server refuses for good (invalid, bad request,
//     forbidden, a webhook's denial) is not retried: Decide is called again
//     on a fresh observation with Input.Rejection, which turns it into a
//     failed rollout.
//
// The tests hold Decide to its promises in a model of everything around it
// (model_test.go, explore_test.go): an exhaustive search of every sequence
// of events to a bounded depth from each state, and long random walks.
package bluegreen
