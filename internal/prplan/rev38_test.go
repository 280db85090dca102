/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// rev38_test.go: hostile review of issue 38 — plans that disagree with what
// the controller does.

package prplan_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// The controller (apply.ownedElsewhere) refuses to change an object stamped
// with another GitRepository's source, or one made by hand without
// bggitops.dev/adopt, and keeps the whole namespace out. The plan shows a
// plain change and succeeds.
func TestRev38ObjectOwnedElsewhereIsPlannedAsAChange(t *testing.T) {
	ctx := context.Background()
	ns := reconcileNS(t)
	theirs := configMap(ns, "theirs")
	theirs.Annotations = map[string]string{v1alpha1.SourceAnnotation: ns + "/other"}
	require.NoError(t, env.Client.Create(ctx, theirs))
	handmade := configMap(ns, "handmade")
	require.NoError(t, env.Client.Create(ctx, handmade))
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jobs"}}
	gr.Status.Inventory = &v1alpha1.Inventory{}

	var head []*unstructured.Unstructured
	for _, name := range []string{"theirs", "handmade"} {
		cm := configMap(ns, name)
		cm.Data = map[string]string{"k": "changed by the PR"}
		cm.Annotations = map[string]string{v1alpha1.SourceAnnotation: ns + "/jobs"}
		head = append(head, object(t, cm))
	}
	r := plan(t, prplan.Input{GitRepository: gr}, head...)

	assert.Len(t, r.Refused, 2, "the controller refuses both (not created by this GitRepository); plan: %s", r.Summary())
	assert.Equal(t, v1alpha1.PlanFailed, r.Outcome(), r.Summary())
}

// apply.confine never applies a ServiceAccount token Secret; the plan's
// dry-run accepts it and the plan succeeds.
func TestRev38TokenSecretIsPlannedAsAdded(t *testing.T) {
	ns := reconcileNS(t)
	s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tok", Annotations: map[string]string{
			"kubernetes.io/service-account.name": "default", v1alpha1.SourceAnnotation: ns + "/jobs"}},
		Type: corev1.SecretTypeServiceAccountToken}
	r := plan(t, prplan.Input{}, object(t, s))
	assert.Len(t, r.Refused, 1, "the controller never applies it (ErrTokenSecret); plan: %s", r.Summary())
}

// The controller rolls a change out against the spec the running child
// runs (active.go: Plan(d.baseOf(a), d.spec)), not against the live
// parent's spec. While a commit waits for a closed rollout window the two
// differ: a PR that reverts to what runs is planned as a blue/green
// transition with savepoint, and the controller does nothing.
func TestRev38RevertToRunningSpecWhileWaitingForWindow(t *testing.T) {
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

// cli/plan.go sets each FlinkBlueGreenDeployment's child check after Plan
// (setChecks); the controller's apply Check rejects such a child and keeps
// its namespace out, but Outcome and Summary never look at the check.
func TestRev38RefusedChildCheckDoesNotFailThePlan(t *testing.T) {
	r := &prplan.Result{Report: &review.Report{Objects: []review.Object{{
		APIVersion: "bggitops.dev/v1alpha1", Kind: "FlinkBlueGreenDeployment", Namespace: "team-a", Name: "orders",
		Change: review.Changed, Deployment: &review.Plan{Action: review.ActionTransitionSavepoint,
			Check: "will be refused: its FlinkDeployment child would be rejected: spec.taskManager.resource.cpu"}}}},
		Jobs: []prplan.Job{{Namespace: "team-a", Name: "orders", Action: review.ActionTransitionSavepoint, Running: "orders-blue"}}}
	assert.Equal(t, v1alpha1.PlanFailed, r.Outcome(), "summary: %s", r.Summary())
}

// An object in a namespace that neither exists nor comes with the head:
// the dry-run's NotFound is taken for "new" (live.go dryRunApply), so the
// plan shows it added and succeeds; the controller's dry-run gets the same
// NotFound and refuses it.
func TestRev38ObjectInAMissingNamespaceIsPlannedAsAdded(t *testing.T) {
	r := plan(t, prplan.Input{}, object(t, configMap("no-such-namespace-rev38", "settings")))
	assert.Len(t, r.Refused, 1, "plan: %s", r.Summary())
}

// A refusal quotes the head's values; mdEscape leaves links and images
// live, so a hostile PR puts a tracking image or a phishing link into the
// comment the bot posts.
func TestRev38RefusalReasonInjectsMarkdown(t *testing.T) {
	ns := reconcileNS(t)
	cm := configMap(ns, "evil")
	cm.Labels = map[string]string{"x": "![a](https://e.example/p.png)"}
	r := plan(t, prplan.Input{}, object(t, cm))
	require.Len(t, r.Refused, 1)
	md := r.Markdown("<!-- m -->")
	t.Logf("%s", md)
	assert.NotContains(t, md, "![a](https://e.example/p.png)")
}

// A head that adds a CRD and an object of its kind: the controller applies
// the CRD first and dry-runs the rest after (apply/stage.go deferred); the
// plan reads the live object of a kind not served yet and fails outright.
func TestRev38CRDWithItsFirstObjectCannotBePlanned(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.rev38.example.com"},
		"spec": map[string]any{"group": "rev38.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rev38.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"}}}
	_, err := prplan.Plan(context.Background(), prplan.Input{Head: []*unstructured.Unstructured{crd, w},
		Applier: env.Client, Reader: env.Client, Now: time.Now(), HeadRevision: "refs/pull/7/head@sha1:" + strings.Repeat("7", 40)})
	assert.NoError(t, err)
}

// A revert to what the old colour runs, pushed during a transition: the
// controller goes back to the old colour (transition.go needsNewColour,
// backToOldColour: judged against baseOf(oc)); the plan judges against the
// live spec being rolled out and says the new colour restarts from a fresh
// savepoint.
func TestRev38RevertDuringTransitionGoesBackToTheOldColour(t *testing.T) {
	ctx := context.Background()
	ns := reconcileNS(t)
	p := fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint")
	p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	deploy(t, p)
	next := fbgd(t, ns, "orders", 2, "flink:1.20.1", "savepoint")
	next.Spec.Promotion = p.Spec.Promotion
	require.Eventually(t, func() bool {
		l := live(t, ns, "orders")
		l.Spec = next.Spec
		l.Annotations[v1alpha1.RevisionAnnotation] = next.Annotations[v1alpha1.RevisionAnnotation]
		return env.Client.Update(ctx, l) == nil
	}, 5*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		l := live(t, ns, "orders")
		return l.Status.BlueGreenState == v1alpha1.TransitioningToGreen && l.Status.Savepoint != nil && l.Status.Savepoint.Path != ""
	}, waitFor, 100*time.Millisecond)

	revert := fbgd(t, ns, "orders", 3, "flink:1.20.0", "savepoint")
	revert.Spec.Promotion = p.Spec.Promotion
	r := plan(t, prplan.Input{}, object(t, revert))
	j := job(t, r, "orders")
	t.Logf("plan: %s %q", j.Action, j.Facts)

	require.Eventually(t, func() bool {
		l := live(t, ns, "orders")
		l.Spec = revert.Spec
		l.Annotations[v1alpha1.RevisionAnnotation] = revert.Annotations[v1alpha1.RevisionAnnotation]
		return env.Client.Update(ctx, l) == nil
	}, 5*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		return live(t, ns, "orders").Status.BlueGreenState == v1alpha1.ActiveBlue
	}, waitFor, 100*time.Millisecond, "the controller goes back to orders-blue")
	for _, f := range j.Facts {
		assert.NotContains(t, f, "started again with this change's spec", "the controller went back to orders-blue instead")
	}
	assert.NotEqual(t, review.ActionTransitionSavepoint, j.Action)
}
