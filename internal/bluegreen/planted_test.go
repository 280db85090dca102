/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A planted bug is a realistic mistake in Decide, kept as a replacement
// of one snippet of a source file. The gate plants each, one at a time,
// through `go test -overlay` (the working tree is never touched), and runs
// only the explorer and the random walks: each bug must be caught by them
// alone, not by a named test. A snippet that no longer occurs exactly once
// fails the gate: the bug must then be planted again in the changed code.
type plantedBug struct {
	name     string
	file     string
	old, new string
}

// Not among them: Child.Ready without its !suspendedSpec() term. It is
// equivalent today: monitor handles a suspended new colour before asking
// whether it is ready, settle and mirror ask suspended() first, and the
// Flink operator never reports a job it stops STABLE and RUNNING at the
// generation that suspends it.
var plantedBugs = []plantedBug{
	{"readiness ignores status.observedGeneration", "types.go",
		"return c.Observed() && c.LifecycleState == LifecycleStable",
		"return c.LifecycleState == LifecycleStable"},
	{"the abort deadline re-armed when a ready colour stops being ready", "transition.go",
		"if d.p.PromotionMode() == v1alpha1.PromotionManual && kind == kindBlueGreen {",
		"if kind == kindBlueGreen {"},
	{"a spec change during a stateful transition re-applies the new colour with an empty savepoint path", "transition.go",
		"how = \"restarting\"\n\t\td.deleteChild(t)",
		"how = \"restarting\"\n\t\td.apply(d.desiredChild(t, \"\"))"},
	{"the new colour re-specced in place instead of deployed again from the savepoint", "transition.go",
		"return kind != kindInPlace && path != \"\" && d.stateful()",
		"return false"},
	{"no abort at the savepoint timeout", "savepoint.go",
		"case !d.now.Before(deadline.Time):\n\t\td.savepointFailed(x, \"SavepointFailed\", fmt.Sprintf(\"savepoint %s of %s did not complete",
		"case false:\n\t\td.savepointFailed(x, \"SavepointFailed\", fmt.Sprintf(\"savepoint %s of %s did not complete"},
	{"a rollout Succeeded although its new colour was never deployed", "savepoint.go",
		"d.end(v1alpha1.RolloutSuperseded, \"superseded by \"+revOr(d.revision())+\", which needs no new colour: \"+",
		"d.end(v1alpha1.RolloutSucceeded, \"superseded by \"+revOr(d.revision())+\", which needs no new colour: \"+"},
	{"ACTIVE/SUSPENDED while the job still runs", "transition.go",
		"if tc.suspended() {\n\t\t\td.finalizeSuspended(t, tc)",
		"if tc.suspendedSpec() {\n\t\t\td.finalizeSuspended(t, tc)"},
	{"a first deployment that ignores initialSavepointPath", "active.go",
		"d.apply(d.desiredChild(c, from.path))",
		"d.apply(d.desiredChild(c, \"\"))"},
	{"a blue/green transition started while the rollout window is closed", "active.go",
		"if !d.in.Window.Open {",
		"if false {"},
	// The system around Decide (TestExploreTheSystem): fencing, lasting
	// errors, ageing savepoints.
	{"a delete sent before the status that decided it is written", "fence.go",
		"if a.Type == DeleteChild || a.Type == ApplyChild {",
		"if a.Type == ApplyChild {"},
	{"a suspend or re-spec sent before the status that decided it is written", "fence.go",
		"if a.Type == DeleteChild || a.Type == ApplyChild {",
		"if a.Type == DeleteChild {"},
	{"an error that lasts past the abort deadline retried for ever", "fence.go",
		"if st.AbortTimestamp != nil && passed(in.Now, st.AbortTimestamp.Time) {",
		"if false {"},
	{"a new colour started from a savepoint older than the savepoint timeout", "savepoint.go",
		"if b == nil && diff.Type == DiffTransition && d.aged(snap, deadline) {",
		"if false {"},
	{"a recorded cut-over whose delete was lost leaves the old colour running", "active.go",
		"\td.stopOther(x)\n",
		"\n"},
	{"a recorded re-spec of the new colour whose request was lost is never made", "transition.go",
		"if d.changedDuringTransition(kind, t, tc, oc) || d.targetBehind(kind, t, tc, oc) {",
		"if d.changedDuringTransition(kind, t, tc, oc) {"},
	{"a commit during a stateful transition restarts the new colour from the first commit's savepoint", "transition.go",
		"return sp != nil && sp.Name != d.snapshotName(a) && sp.Name != d.freshName(a)",
		"return sp != nil && false"},
	{"a commit after the rollout window closed re-specs the new colour", "transition.go",
		"d.backToOldColour(t, tc, oc)\n\t\treturn true\n\t}\n\tif tc == nil || tc.Deleting {",
		"\n\t}\n\tif tc == nil || tc.Deleting {"},
	// The state lifecycle: deletion and re-creation.
	{"a re-created object's first job ignores the state record of its name", "lifecycle.go",
		"of, r := RecordOf(d.p), d.in.Record",
		"of, r := RecordOf(d.p), (*Record)(nil)"},
	{"a deletion deletes the job holding the state before its final savepoint completes", "lifecycle.go",
		"(c != h || !waiting)",
		"true"},
	{"a deletion records a running job by its last savepoint instead of taking one", "lifecycle.go",
		"case h.jobStopped() && lc != \"\":",
		"case !h.Ready() && lc != \"\":"},
	// Orphaned children (TestExploreOrphanedChildren, see plantedRun).
	{"a deletion that orphans the children deletes them", "orphan.go",
		"return slices.Contains(d.p.Finalizers, metav1.FinalizerOrphanDependents)",
		"return slices.Contains(d.p.Finalizers, metav1.FinalizerOrphanDependents) && false"},
	{"an orphaned child of another job is adopted", "orphan.go",
		"if why := d.notThisJob(c); why != \"\" {",
		"if why := d.notThisJob(c); false && why != \"\" {"},
	{"an adopted orphan is re-specced from the template", "orphan.go",
		"d.apply(&ChildSpec{Name: c.Name, Color: c.Color, Spec: *c.Spec.DeepCopy(), Revision: c.Revision})",
		"d.apply(d.desiredChild(c.Color, \"\"))"},
}

// plantedRun is the -run of the searches that must catch b: the orphan
// exploration alone reaches the code of orphan.go.
func plantedRun(b plantedBug) string {
	if b.file == "orphan.go" {
		return "^TestExploreOrphanedChildren$"
	}
	return "^(TestExploreEveryInterleaving|TestExploreTheSystem|TestRandomWalksWithFaults)$"
}

// TestPlantedBugsAreCaughtByTheExplorer is the gate: every planted bug
// makes the explorer or the walks report a violation.
func TestPlantedBugsAreCaughtByTheExplorer(t *testing.T) {
	if os.Getenv("BGGITOPS_TEST_UNIT") != "" {
		t.Skip("make test-unit, the fast loop, leaves the gate (a build of the package per planted bug) to make test")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goTool := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	for _, b := range plantedBugs {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			out, caught := runPlanted(t, goTool, dir, b)
			if !caught {
				t.Fatalf("not caught by the explorer or the walks:\n%s", tail(out, 40))
			}
			t.Logf("caught:\n%s", violation(out))
		})
	}
}

// runPlanted runs the explorer and the walks with b planted; caught is
// true when they report a violation.
func runPlanted(t *testing.T, goTool, dir string, b plantedBug) (string, bool) {
	src, err := os.ReadFile(filepath.Join(dir, b.file))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte(b.old)); n != 1 {
		t.Fatalf("%s holds the snippet %d times, not once: plant the bug again in the changed code:\n%s", b.file, n, b.old)
	}
	tmp := t.TempDir()
	mutated := filepath.Join(tmp, b.file)
	if err := os.WriteFile(mutated, bytes.Replace(src, []byte(b.old), []byte(b.new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(dir, b.file): mutated}})
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "test", "-count=1", "-failfast", "-vet=off", "-timeout=20m", "-overlay="+ov,
		"-run", plantedRun(b), ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "EXPLORE_FAULTS=1", "BG_SEED=", "EXPLORE_DEPTH=")
	o, err := cmd.CombinedOutput()
	out := string(o)
	if err == nil {
		return out, false
	}
	if strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") {
		t.Fatalf("the planted bug does not compile:\n%s", tail(out, 20))
	}
	if strings.Contains(out, "panic: test timed out") && !strings.Contains(out, "violation") {
		t.Fatalf("the searches ran out of time before they caught it or finished (a machine this slow needs a longer -timeout):\n%s", tail(out, 20))
	}
	return out, strings.Contains(out, "violation")
}

// violation is the first violation of the output, with its trail.
func violation(out string) string {
	i := strings.Index(out, "violation")
	if i < 0 {
		return ""
	}
	lines := strings.SplitN(out[i:], "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
