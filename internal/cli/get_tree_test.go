/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of the tree `bg-gitops get fbgd NAME` prints, for each state at a fixed
// instant (golden files).

package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// The golden trees are at a fixed instant.
var treeNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	treeRev1 = "main@sha1:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
	treeRev2 = "main@sha1:9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c"
	treeUID  = types.UID("6d1f0e7a-0000-4000-8000-000000000001")
)

func treeAt(d time.Duration) *metav1.Time { t := metav1.NewTime(treeNow.Add(d)); return &t }

func treeParent(state v1alpha1.BlueGreenState, job v1alpha1.JobState) *v1alpha1.FlinkBlueGreenDeployment {
	parallelism := int32(4)
	return &v1alpha1.FlinkBlueGreenDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "flink", UID: treeUID, Generation: 2,
			CreationTimestamp: *treeAt(-3 * time.Hour),
			Annotations:       map[string]string{v1alpha1.RevisionAnnotation: treeRev2}},
		Spec: v1alpha1.FlinkBlueGreenDeploymentSpec{
			Configuration: map[string]string{v1alpha1.DeploymentDeletionDelayKey: "30 s"},
			Template: v1alpha1.FlinkDeploymentTemplate{Spec: v1alpha1.FlinkDeploymentSpec{Image: "flink:1.20.1",
				Job: &v1alpha1.JobSpec{Parallelism: &parallelism, UpgradeMode: v1alpha1.UpgradeModeSavepoint}}},
		},
		Status: v1alpha1.FlinkBlueGreenDeploymentStatus{ObservedGeneration: 2, BlueGreenState: state,
			JobStatus: v1alpha1.JobStatus{State: job}, ActiveJobState: "RUNNING",
			ActiveDeployment: "orders-blue", ActiveRevision: treeRev1},
	}
}

func treeReady(p *v1alpha1.FlinkBlueGreenDeployment, status metav1.ConditionStatus, reason, msg string) {
	p.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: status, Reason: reason, Message: msg}}
}

// treeImages are the images of the revisions: the spec's is treeRev2's.
var treeImages = map[string]any{treeRev1: "flink:1.20.0", treeRev2: "flink:1.20.1"}

func treeChild(color, rev, lifecycle, job, jobID string, age time.Duration) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"image": treeImages[rev], "job": map[string]any{"state": "running"}},
		"status": map[string]any{"lifecycleState": lifecycle, "jobStatus": map[string]any{"state": job, "jobId": jobID}},
	}}
	u.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	u.SetName("orders-" + strings.ToLower(color))
	u.SetNamespace("flink")
	u.SetLabels(map[string]string{"flink/blue-green-deployment-type": color})
	u.SetAnnotations(map[string]string{v1alpha1.RevisionAnnotation: rev})
	u.SetCreationTimestamp(*treeAt(-age))
	return u
}

func treeSnapshot(state, path string, triggered, result time.Duration) *unstructured.Unstructured {
	status := map[string]any{"state": state, "triggerTimestamp": treeNow.Add(triggered).Format(time.RFC3339Nano)}
	if path != "" {
		status["path"] = path
	}
	if result != 0 {
		status["resultTimestamp"] = treeNow.Add(result).Format(time.RFC3339Nano)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	u.SetName("orders-sp-0a1b2c3d4e")
	u.SetNamespace("flink")
	u.SetCreationTimestamp(*treeAt(triggered))
	return u
}

func treeEvent(ago time.Duration, typ, reason, msg string) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: reason}, Type: typ, Reason: reason, Message: msg,
		EventTime: metav1.NewMicroTime(treeNow.Add(-ago))}
}

const (
	treeBlueJob  = "a3f1c2d4e5b60718293a4b5c6d7e8f90"
	treeGreenJob = "0c9b8a7f6e5d4c3b2a1908f7e6d5c4b3"
	treeSPPath   = "s3://flink/savepoints/savepoint-a3f1c2-0123456789ab"
)

// treeCases are the trees of the states a rollout goes through.
func treeCases() map[string]fbgdView {
	active := treeParent(v1alpha1.ActiveBlue, v1alpha1.JobRunning)
	active.Status.TargetRevision = treeRev1
	active.Annotations[v1alpha1.RevisionAnnotation] = treeRev1
	treeReady(active, metav1.ConditionTrue, "Running", "orders-blue runs main@sha1:1a2b3c4d5e6f")

	savepointing := treeParent(v1alpha1.SavepointingBlue, v1alpha1.JobReconciling)
	savepointing.Status.TargetRevision = treeRev2
	savepointing.Status.Savepoint = &v1alpha1.SavepointStatus{Name: "orders-sp-0a1b2c3d4e", TriggerTimestamp: treeAt(-12 * time.Second)}
	treeReady(savepointing, metav1.ConditionFalse, "Savepointing", "taking savepoint orders-sp-0a1b2c3d4e of orders-blue")

	transitioning := treeParent(v1alpha1.TransitioningToGreen, v1alpha1.JobReconciling)
	transitioning.Status.TargetRevision = treeRev2
	transitioning.Status.Savepoint = &v1alpha1.SavepointStatus{Name: "orders-sp-0a1b2c3d4e", Path: treeSPPath,
		TriggerTimestamp: treeAt(-time.Minute)}
	transitioning.Status.AbortTimestamp = treeAt(9 * time.Minute)
	transitioning.Status.DeploymentReadyTimestamp = treeAt(-10 * time.Second)
	treeReady(transitioning, metav1.ConditionFalse, "WaitingForDeletionDelay",
		"orders-green is ready; deleting orders-blue at 2026-03-01T12:00:20Z")

	// Manual promotion: green is ready and waits for a person, past the
	// abort deadline, which does not fire while it waits.
	waiting := treeParent(v1alpha1.TransitioningToGreen, v1alpha1.JobReconciling)
	waiting.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	waiting.Status.TargetRevision = treeRev2
	waiting.Status.Savepoint = transitioning.Status.Savepoint
	waiting.Status.AbortTimestamp = treeAt(-16 * time.Second)
	waiting.Status.DeploymentReadyTimestamp = treeAt(-time.Minute)
	treeReady(waiting, metav1.ConditionFalse, "WaitingForPromotion",
		"waiting for promotion: orders-green is ready and orders-blue keeps running; run `bg-gitops promote fbgd orders -n flink` to cut over or `bg-gitops abort fbgd orders -n flink` to roll back")

	aborted := treeParent(v1alpha1.ActiveBlue, v1alpha1.JobFailing)
	aborted.Status.TargetRevision = treeRev2
	aborted.Status.Error = "transition to orders-green aborted: orders-green not ready within 10m0s (lifecycle DEPLOYED, job RECONCILING); orders-blue keeps running. Push a new commit or run `bg-gitops retry fbgd orders -n flink` to try again"
	aborted.Status.Savepoint = transitioning.Status.Savepoint
	treeReady(aborted, metav1.ConditionFalse, "Aborted", aborted.Status.Error)
	suspendedGreen := treeChild("GREEN", treeRev2, "SUSPENDED", "FINISHED", "", 10*time.Minute)
	suspendedGreen.Object["spec"] = map[string]any{"job": map[string]any{"state": "suspended"}}

	deleting := treeChild("BLUE", treeRev1, "STABLE", "RUNNING", treeBlueJob, 3*time.Hour)
	deleting.SetDeletionTimestamp(treeAt(-time.Second))

	history := []corev1.Event{
		treeEvent(3*time.Hour, "Normal", "DeploymentCompleted", "orders-blue is active with "+treeRev1),
		treeEvent(70*time.Second, "Normal", "SavepointStarted", "taking savepoint orders-sp-0a1b2c3d4e of orders-blue (job "+treeBlueJob+") to roll out "+treeRev2),
		treeEvent(58*time.Second, "Normal", "SavepointCompleted", "savepoint "+treeSPPath),
	}
	return map[string]fbgdView{
		"active": {Parent: active, Children: []*unstructured.Unstructured{
			treeChild("BLUE", treeRev1, "STABLE", "RUNNING", treeBlueJob, 3*time.Hour)}, Events: history[:1]},
		"savepointing": {Parent: savepointing,
			Children: []*unstructured.Unstructured{treeChild("BLUE", treeRev1, "STABLE", "RUNNING", treeBlueJob, 3*time.Hour)},
			Snapshot: treeSnapshot("IN_PROGRESS", "", -12*time.Second, 0), Events: history[:2]},
		"transitioning": {Parent: transitioning, Children: []*unstructured.Unstructured{
			treeChild("BLUE", treeRev1, "STABLE", "RUNNING", treeBlueJob, 3*time.Hour),
			treeChild("GREEN", treeRev2, "STABLE", "RUNNING", treeGreenJob, 50*time.Second)},
			Snapshot: treeSnapshot("COMPLETED", treeSPPath, -61*time.Second, -58*time.Second+300*time.Millisecond), Events: history},
		"waiting-for-promotion": {Parent: waiting, Children: []*unstructured.Unstructured{
			treeChild("BLUE", treeRev1, "STABLE", "RUNNING", treeBlueJob, 3*time.Hour),
			treeChild("GREEN", treeRev2, "STABLE", "RUNNING", treeGreenJob, 2*time.Minute)},
			Snapshot: treeSnapshot("COMPLETED", treeSPPath, -3*time.Minute, -3*time.Minute+time.Second)},
		"aborted": {Parent: aborted, Children: []*unstructured.Unstructured{
			treeChild("BLUE", treeRev1, "STABLE", "RUNNING", treeBlueJob, 3*time.Hour), suspendedGreen},
			Snapshot: treeSnapshot("COMPLETED", treeSPPath, -61*time.Second, -58*time.Second),
			Events:   append(history[1:3:3], treeEvent(time.Second, "Warning", "Aborted", aborted.Status.Error))},
		"cut-over": {Parent: func() *v1alpha1.FlinkBlueGreenDeployment {
			p := treeParent(v1alpha1.ActiveGreen, v1alpha1.JobRunning)
			p.Status.ActiveDeployment, p.Status.ActiveRevision, p.Status.TargetRevision = "orders-green", treeRev2, treeRev2
			treeReady(p, metav1.ConditionTrue, "Promoted", "orders-green is active with "+treeRev2)
			return p
		}(), Children: []*unstructured.Unstructured{deleting,
			treeChild("GREEN", treeRev2, "STABLE", "RUNNING", treeGreenJob, 70*time.Second)}},
	}
}

// TestGetTreeGolden renders the tree of each state at a fixed instant.
func TestGetTreeGolden(t *testing.T) {
	for name, v := range treeCases() {
		t.Run(name, func(t *testing.T) {
			golden(t, filepath.Join("testdata", "get", name+".golden"), renderFBGD(v, treeNow))
			// Without now, no relative time shows: that is what --watch
			// compares.
			stable := renderFBGD(v, time.Time{})
			assert.NotContains(t, stable, " ago")
			assert.NotContains(t, stable, "(in ")
			assert.Equal(t, stable, renderFBGD(v, time.Time{}))
		})
	}
}

// TestGetTreeSaysEachColoursJobInTheWordsOfTheJobColumn: while green
// starts, the tree's Job: line names the job that runs as the JOB column
// of `get fbgd` does (RUNNING on blue, not the status's RECONCILING
// summary), and each colour has a line with its own job state and the
// revision and image it runs or rolls out.
func TestGetTreeSaysEachColoursJobInTheWordsOfTheJobColumn(t *testing.T) {
	v := treeCases()["transitioning"]
	v.Children[1] = treeChild("GREEN", treeRev2, "DEPLOYED", "RECONCILING", "", 20*time.Second)
	tree := renderFBGD(v, time.Time{})
	assert.Contains(t, tree, "\nJob:          job RUNNING on orders-blue (main@1a2b3c4), rolling out main@9f8e7d6 to orders-green\n")
	assert.Contains(t, tree, "\nBlue:         orders-blue, active, job RUNNING, runs main@1a2b3c4, image flink:1.20.0\n")
	assert.Contains(t, tree, "\nGreen:        orders-green, target, job RECONCILING, rolls out main@9f8e7d6, image flink:1.20.1\n")

	var table strings.Builder
	writeFBGDTable(&table, []v1alpha1.FlinkBlueGreenDeployment{*v.Parent}, false, time.Time{})
	assert.Contains(t, table.String(), " RUNNING ", "the JOB column")
	assert.NotContains(t, tree, "RECONCILING, active job", "one word for the job, not two")
}

func TestGetRevisionShortenerNeverAmbiguous(t *testing.T) {
	a := "main@sha1:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
	b := "main@sha1:1a2b3c4d5e6f7081ffffffffffffffffffffffff"
	s := newRevisionShortener(a, b, "", "not a revision")
	assert.Equal(t, "main@1a2b3c4d5e6f7081"+"9", s.short(a), "one digit past the common prefix")
	assert.Equal(t, "main@1a2b3c4d5e6f7081f", s.short(b))
	s = newRevisionShortener(a, a)
	assert.Equal(t, "main@1a2b3c4", s.short(a), "git's 7 digits when nothing collides")
	assert.Equal(t, "sha1:x", newRevisionShortener().short("sha1:x"), "what does not parse shows as it is")
	assert.Equal(t, "-", s.short(""))
	assert.Equal(t, "1a2b3c4", s.short("sha1:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"), "a bare commit")
}

func TestGetLastEvents(t *testing.T) {
	var evs []corev1.Event
	for i := 7; i >= 1; i-- {
		evs = append(evs, treeEvent(time.Duration(i)*time.Minute, "Normal", fmt.Sprintf("R%d", i), ""))
	}
	evs[0].EventTime = metav1.MicroTime{}
	evs[0].LastTimestamp = metav1.NewTime(treeNow) // a core/v1 event, repeated just now
	got := treeLastEvents(evs, maxTreeEvents)
	var reasons []string
	for _, e := range got {
		reasons = append(reasons, e.Reason)
	}
	assert.Equal(t, []string{"R4", "R3", "R2", "R1", "R7"}, reasons, "the newest five, newest last")
}
