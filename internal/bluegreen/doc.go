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
//     per rollout, history.go) and the active job's state included. A
//     new colour never starts from a savepoint older than the savepoint
//     timeout, and a commit during a stateful transition restarts it from
//     a fresh savepoint of the old colour, which still holds the state.
//   - Plan (on top of Classify): which rollout a spec change gets from an
//     active colour, shared by the controller and `bg-gitops diff`.
//   - WindowState and ParseFlinkDuration: the parsers of user input that
//     the decision depends on.
//
// A controller-runtime adapter executes a Decision. Every decision is
// idempotent, so a crash anywhere repeats the same actions with the same
// names. The adapter's side of the contract:
//
//   - a decision that acts or changes the status is made on children read
//     from the API server, not from a cache that may not show the last
//     writes yet (a child at its previous generation looks ready);
//   - fencing: a replica acts only on the status it decided from. Every
//     status write carries the resourceVersion read (an optimistic lock).
//     A decision that deletes or applies a child, or asks for a
//     savepoint, writes its status first (StatusFirst), so a replica whose
//     decision is stale (paused past its lease, partitioned) gets a
//     conflict and acts on nothing, and a replica that finds that status
//     with its actions undone completes them (Decide on that status asks
//     for them again: stopOther, targetBehind, targetMissing, reissue).
//     The leader Lease is checked
//     before the actions, which are sent before it runs out, and each
//     request carries the observation's preconditions (a delete the
//     child's uid and resourceVersion, an apply to an existing child its
//     resourceVersion), so one delivered late fails instead of landing on
//     a job another decision has taken charge of (an apply that creates
//     has none);
//   - an action the API server refuses for good (invalid, bad request,
//     forbidden, a webhook's denial) is not retried: Decide is called again
//     on a fresh observation with Input.Rejection, which turns it into a
//     failed rollout. So is an action that keeps failing with an error
//     retrying might fix once the deadline of the status has passed
//     (Overdue; Rejection.Lasting): the rollout ends as that deadline
//     says, the running colour kept, naming the error.
//
// The tests hold Decide to its promises in a model of everything around it
// (model_test.go, explore_test.go), the adapter's order of writes and
// actions, a second replica and lasting errors included: an exhaustive
// search of every sequence of events to a bounded depth from each state,
// and long random walks.
package bluegreen
