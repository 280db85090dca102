// Package bluegreen owns the blue/green rollout logic of a
// FlinkBlueGreenDeployment as pure functions, free of any Kubernetes client:
//
//   - Decide: the state machine (FLIP-503 states, timers and savepoint
//     handoff, plus the bg-gitops extensions: savepoint timeout, forward
//     finalisation, retry/abort/promote annotations, manual promotion,
//     rollout windows, revisions and conditions). It maps the observed
//     world (parent, children, snapshot, rollout window, clock) to the next
//     status and the actions that lead there.
//   - Classify: the spec-change classifier shared by the controller and
//     `bg-gitops diff`.
//   - WindowState and ParseFlinkDuration: the parsers of user input that
//     the decision depends on.
//
// A controller-runtime adapter executes a Decision: it runs the actions in
// order (server-side apply of children, deletes, FlinkStateSnapshot
// creation), then writes Decision.Status if it differs from the observed
// status, emits the events and requeues. Every decision is idempotent, so
// a crash between the actions and the status write repeats the same
// actions with the same names.
package bluegreen
