/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// faults.go: the simulated Flink operator's faults a commit can cause (Fault,
// Faults) and TryAFailure, the text on how to cause one by hand.

package devenv

import (
	"fmt"
	"strings"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// Fault is a failure of the simulated Flink operator that a commit causes:
// a line under flinkConfiguration: of the staging patch.
type Fault struct {
	Key, Value string
	// Effect says what a push of the line does.
	Effect string
}

// Line is the YAML line to add, without its indentation.
func (f Fault) Line() string { return fmt.Sprintf("%s: %q", f.Key, f.Value) }

// Faults are the simulator's faults worth trying by hand (flinksim has more,
// for tests).
var Faults = []Fault{
	{flinksim.FaultNeverReady, "true",
		"the new job never becomes RUNNING: the transition aborts after the grace period, the old colour keeps running, the commit gets a rollout failure"},
	{flinksim.FaultFailAfter, "20s",
		"the new job is cut over to, then fails 20 s after it started"},
	{flinksim.FaultSpecError, "no such option: x",
		"the Flink operator refuses the new spec with that message"},
	{flinksim.FaultSavepoint, "fail",
		`savepoints of the job that runs with it fail ("hang": never finish): push it, then another change, whose savepoint fails`},
}

// TryAFailure is the text `bg-gitops dev` prints, and README.md shows, on
// how to make a job fail by editing file (PatchFile in a clone); each line
// indented by indent.
func TryAFailure(indent, file string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%stry a failure: add one of these lines under flinkConfiguration: in %s\n", indent, file)
	fmt.Fprintf(&b, "%s(8 spaces in, as the line already there), commit and push:\n", indent)
	for _, f := range Faults {
		fmt.Fprintf(&b, "%s  %s\n%s      %s\n", indent, f.Line(), indent, f.Effect)
	}
	return b.String()
}
