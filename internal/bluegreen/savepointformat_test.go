/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// formatWorld deploys blue with the given flinkConfiguration entries.
func formatWorld(t *testing.T, conf string) *world {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Spec.Template.Spec.FlinkConfiguration = rawJSON(`{"state.savepoints.dir":"file:///sp"` + conf + `}`)
	w.step()
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	return w
}

// transitionSnapshot pushes a new image and returns the savepoint request.
func transitionSnapshot(w *world) *SnapshotSpec {
	w.t.Helper()
	newImage(w, "flink:1.20.1", "main@sha1:r2")
	d := w.step()
	if len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot {
		w.fatalf("want a savepoint, got %s", describeActions(d.Actions))
	}
	return d.Actions[0].Snapshot
}

func TestSavepointFormat(t *testing.T) {
	for _, tc := range []struct{ name, conf, want string }{
		{"unset", ``, ""},
		{"canonical", `,"kubernetes.operator.savepoint.format.type":"CANONICAL"`, "CANONICAL"},
		{"native, lower case", `,"kubernetes.operator.savepoint.format.type":" native"`, "NATIVE"},
		{"nested", `,"kubernetes":{"operator":{"savepoint":{"format":{"type":"NATIVE"}}}}`, "NATIVE"},
		{"empty", `,"kubernetes.operator.savepoint.format.type":""`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := formatWorld(t, tc.conf)
			if got := transitionSnapshot(w).FormatType; got != tc.want {
				w.fatalf("formatType = %q, want %q", got, tc.want)
			}
			// Asked again while not seen: the same request.
			delete(w.snaps, w.status().Savepoint.Name)
			d := w.step()
			if len(d.Actions) != 1 || d.Actions[0].Snapshot.FormatType != tc.want {
				w.fatalf("re-issued savepoint: %s", describeActions(d.Actions))
			}
		})
	}
}

// TestSavepointFormatOfTheTemplate: a commit that changes the format with
// a transition gets its savepoint in the new format, for the job that
// restores from it.
func TestSavepointFormatOfTheTemplate(t *testing.T) {
	w := formatWorld(t, `,"kubernetes.operator.savepoint.format.type":"NATIVE"`)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"state.savepoints.dir":"file:///sp","kubernetes.operator.savepoint.format.type":"CANONICAL"}`)
	}, "main@sha1:r2")
	if got := transitionSnapshot(w).FormatType; got != "CANONICAL" {
		w.fatalf("formatType = %q, want the template's CANONICAL", got)
	}
}

// TestInvalidSavepointFormatIsRefused: no snapshot, blue keeps running,
// the rollout fails naming the key, and the next commit that fixes the
// key rolls out with a savepoint in its format.
func TestInvalidSavepointFormatIsRefused(t *testing.T) {
	w := formatWorld(t, ``)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Image = "flink:1.20.1"
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"state.savepoints.dir":"file:///sp","kubernetes.operator.savepoint.format.type":"UNKNOWN"}`)
	}, "main@sha1:r2")
	d := w.step()
	if len(d.Actions) != 0 || len(d.Events) != 1 || d.Events[0].Reason != "SavepointRefused" || !d.Events[0].Warning {
		w.fatalf("want a refusal and nothing done, got %s %s", describeActions(d.Actions), describeEvents(d.Events))
	}
	w.expectState(sActiveBlue, jFailing)
	if msg := w.status().Error; !strings.Contains(msg, SavepointFormatKey) || !strings.Contains(msg, `"UNKNOWN"`) {
		w.fatalf("error %q does not name the key and its value", msg)
	}
	if w.status().TargetRevision != "main@sha1:r2" || w.status().Savepoint != nil {
		w.fatalf("after the refusal: %+v", w.status())
	}
	w.expectNoop(w.step())

	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"state.savepoints.dir":"file:///sp","kubernetes.operator.savepoint.format.type":"native"}`)
	}, "main@sha1:r3")
	d = w.step()
	if len(d.Actions) != 1 || d.Actions[0].Type != CreateSnapshot || d.Actions[0].Snapshot.FormatType != "NATIVE" {
		w.fatalf("want a NATIVE savepoint, got %s", describeActions(d.Actions))
	}
	w.completeSnapshot()
	w.step()
	w.expectState(sToGreen, jReconciling)
}

// TestSpecWithInvalidFormatWhileSavepointing: a savepoint not seen yet is
// asked again in the current spec's format; an invalid one ends the
// attempt once, with one event.
func TestSpecWithInvalidFormatWhileSavepointing(t *testing.T) {
	w := formatWorld(t, ``)
	transitionSnapshot(w)
	delete(w.snaps, w.status().Savepoint.Name) // lost before the API server had it
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"state.savepoints.dir":"file:///sp","kubernetes.operator.savepoint.format.type":"nativ"}`)
	}, "main@sha1:r3")
	d := w.step()
	if len(d.Actions) != 0 || describeEvents(d.Events) != "SavepointRefused" {
		w.fatalf("want one refusal, got %s %s", describeActions(d.Actions), describeEvents(d.Events))
	}
	w.expectState(sActiveBlue, jFailing)
	w.expectNoop(w.step())
}
