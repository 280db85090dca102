/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// A suspend committed while the active job restarts with an in-place
// change (a stateful restart: upgradeMode savepoint) stops that job now:
// the in-place rollout is superseded by the suspend's, and the status
// reports SUSPENDED once the job stopped, with no abort. (Failed on the
// code as it was: "want orders-green applied, got []": the suspend waited
// for the restart, which did not come, and the grace period's end
// reported the in-place change Aborted before the suspend was applied.)
func TestASuspendCommittedDuringAStatefulRestartIsReportedAsASuspend(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	parallelismDefault(w, "4", "main@sha1:r3")
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.advance(time.Minute)
	suspend(w, "main@sha1:r4")
	d := w.step()
	if spec := w.expectApply(d, "orders-green"); !spec.Suspended() {
		w.fatalf("green applied running, want suspended")
	}
	w.expectEvents(d, "PatchStarted")
	w.expectState(sToGreen, jReconciling)
	w.expectTime("abortTimestamp", w.status().AbortTimestamp, w.now.Add(10*time.Minute))
	w.advance(time.Minute)
	w.suspendDone(Green)
	w.step()
	w.expectState(sActiveGreen, jSuspended)
	if w.status().Error != "" {
		w.fatalf("error %q after the suspend", w.status().Error)
	}
	h := w.status().History
	prev, last := h[len(h)-2], h[len(h)-1]
	if last.Revision != "main@sha1:r4" || last.Outcome != v1alpha1.RolloutSucceeded {
		w.fatalf("the suspend is not r4's succeeded rollout: %+v", last)
	}
	if prev.Revision != "main@sha1:r3" || !strings.HasPrefix(prev.Reason, "superseded by main@sha1:r4") {
		w.fatalf("r3's in-place rollout not superseded by the suspend: %+v", prev)
	}
	for _, line := range w.history {
		if strings.Contains(line, "Aborted") {
			w.fatalf("an abort was reported: %s", line)
		}
	}
}
