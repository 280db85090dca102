/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// inflight_test.go: a change judged against what the active child runs,
// as the controller judges it, while the live spec holds a change not
// rolled out yet.

package prplan_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// The controller rolls a change out against the spec the running child
// runs (active.go: Plan(d.baseOf(a), d.spec)), not against the live
// parent's spec. While a commit waits for a closed rollout window the two
// differ: a PR that reverts to what runs plans no new colour, as the
// controller starts none.
func TestRevertWhileWaitingForAWindowPlansNothing(t *testing.T) {
	ctx := context.Background()
	ns := reconcileNS(t)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jobs"},
		Spec: v1alpha1.GitRepositorySpec{URL: "https://example.invalid/x.git", Suspend: true,
			RolloutWindows: []v1alpha1.RolloutWindow{{Schedule: "0 3 29 2 *", Duration: metav1.Duration{Duration: time.Hour}}}}}
	require.NoError(t, env.Client.Create(ctx, gr))
	stamp := func(p *v1alpha1.FlinkBlueGreenDeployment) *v1alpha1.FlinkBlueGreenDeployment {
		p.Annotations[v1alpha1.SourceAnnotation] = ns + "/jobs"
		return p
	}
	deploy(t, stamp(fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint")))
	next := stamp(fbgd(t, ns, "orders", 2, "flink:1.20.1", "savepoint"))
	require.Eventually(t, func() bool {
		l := live(t, ns, "orders")
		l.Spec = next.Spec
		l.Annotations = next.Annotations
		return env.Client.Update(ctx, l) == nil
	}, 5*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		c := apimeta.FindStatusCondition(live(t, ns, "orders").Status.Conditions, v1alpha1.ReconcilingCondition)
		return c != nil && c.Reason == "WaitingForRolloutWindow"
	}, waitFor, 100*time.Millisecond)

	revert := stamp(fbgd(t, ns, "orders", 3, "flink:1.20.0", "savepoint"))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(gr), gr))
	r := plan(t, prplan.Input{GitRepository: gr}, object(t, revert))
	j := job(t, r, "orders")
	t.Logf("plan: %s; facts %q", r.Summary(), j.Facts)

	// What the controller does once merged: open the window, apply the revert.
	require.Eventually(t, func() bool {
		l := live(t, ns, "orders")
		l.Spec = revert.Spec
		l.Annotations = revert.Annotations
		return env.Client.Update(ctx, l) == nil
	}, 5*time.Second, 50*time.Millisecond)
	patch := client.MergeFrom(gr.DeepCopy())
	gr.Spec.RolloutWindows = []v1alpha1.RolloutWindow{{Schedule: "* * * * *", Duration: metav1.Duration{Duration: time.Minute}}}
	require.NoError(t, env.Client.Patch(ctx, gr, patch))
	green := func() bool {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("flink.apache.org/v1beta1")
		u.SetKind("FlinkDeployment")
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders-green"}, u) == nil
	}
	// The controller has handled the merge once it no longer waits.
	require.Eventually(t, func() bool {
		c := apimeta.FindStatusCondition(live(t, ns, "orders").Status.Conditions, v1alpha1.ReconcilingCondition)
		return green() || c == nil || c.Reason != "WaitingForRolloutWindow"
	}, waitFor, 100*time.Millisecond)
	time.Sleep(time.Second)
	started := green()
	l := live(t, ns, "orders")
	t.Logf("controller after merge: state %s active %s conditions %v, green started: %v", l.Status.BlueGreenState, l.Status.ActiveDeployment, l.Status.Conditions, started)
	if started {
		assert.Equal(t, review.ActionTransitionSavepoint, j.Action)
	} else {
		assert.Equal(t, review.ActionNothing, j.Action, "the controller started no new colour, the plan said %q", j.Action)
	}
}

func reconcileNS(t *testing.T) string { return reconciletest.Namespace(t, env.Client) }

// A revert to what the old colour runs, pushed during a transition: the
// controller goes back to the old colour (transition.go needsNewColour,
// backToOldColour: judged against baseOf(oc)), and so does the plan: it
// does not say the new colour restarts.
func TestRevertDuringATransitionGoesBackToTheOldColour(t *testing.T) {
	ns := reconcileNS(t)
	p := fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint")
	p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	deploy(t, p)
	next := fbgd(t, ns, "orders", 2, "flink:1.20.1", "savepoint")
	next.Spec.Promotion = p.Spec.Promotion
	commit(t, next)
	require.Eventually(t, func() bool {
		l := live(t, ns, "orders")
		return l.Status.BlueGreenState == v1alpha1.TransitioningToGreen && l.Status.Savepoint != nil && l.Status.Savepoint.Path != ""
	}, waitFor, 100*time.Millisecond)

	revert := fbgd(t, ns, "orders", 3, "flink:1.20.0", "savepoint")
	revert.Spec.Promotion = p.Spec.Promotion
	r := plan(t, prplan.Input{}, object(t, revert))
	j := job(t, r, "orders")
	t.Logf("plan: %s %q", j.Action, j.Facts)

	commit(t, revert)
	require.Eventually(t, func() bool {
		return live(t, ns, "orders").Status.BlueGreenState == v1alpha1.ActiveBlue
	}, waitFor, 100*time.Millisecond, "the controller goes back to orders-blue")
	for _, f := range j.Facts {
		assert.NotContains(t, f, "started again with this change's spec", "the controller went back to orders-blue instead")
	}
	assert.NotEqual(t, review.ActionTransitionSavepoint, j.Action)
}
