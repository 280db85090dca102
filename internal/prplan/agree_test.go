/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// agree_test.go: the agreement test of issue 38 — the plan a pull request
// shows for a running job equals what the controller does once the head is
// applied, both told in one small vocabulary of effects.

package prplan_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// The effects both sides are told in.
const (
	effectNewColour = "new colour from a savepoint" // the other colour starts from a savepoint of the running one
	effectEmpty     = "new colour from empty state" // the other colour starts without a savepoint
	effectPatch     = "running child patched in place"
	effectSuspend   = "running child suspended"
	effectNothing   = "nothing" // the same child, the same generation
	effectDelete    = "deleted after a final savepoint"
	effectStops     = "deleted without a savepoint"
	effectRecreated = "running child recreated"
)

// planned is the effect a plan's job announces.
func planned(j prplan.Job) string {
	switch j.Action {
	case review.ActionTransitionSavepoint:
		return effectNewColour
	case review.ActionTransitionStateless:
		return effectEmpty
	case review.ActionPatch:
		return effectPatch
	case review.ActionSuspend:
		return effectSuspend
	case review.ActionNothing, review.ActionIngress:
		return effectNothing
	case review.ActionDelete:
		if j.StopsWithoutSavepoint {
			return effectStops
		}
		return effectDelete
	}
	return "unmapped action " + string(j.Action)
}

// before is what ran before the head was applied.
type before struct {
	ns, name   string
	uid        types.UID
	generation int64
}

func childOf(t *testing.T, ns, name string) (*unstructured.Unstructured, bool) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	require.NoError(t, err)
	return u, true
}

func snapshotRecord(t *testing.T, ns, name string) bool {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK.GroupVersion().WithKind("FlinkStateSnapshotList"))
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns),
		client.MatchingLabels{v1alpha1.FlinkBlueGreenDeploymentLabel: name, v1alpha1.StateRecordLabel: "true"}))
	for _, r := range list.Items {
		if s, _, _ := unstructured.NestedString(r.Object, "status", "state"); s == "COMPLETED" {
			return true
		}
	}
	return false
}

// running records the blue child of a job deployed blue.
func running(t *testing.T, ns, name string) before {
	t.Helper()
	b, ok := childOf(t, ns, name+"-blue")
	require.True(t, ok, "%s/%s-blue runs", ns, name)
	return before{ns: ns, name: name, uid: b.GetUID(), generation: b.GetGeneration()}
}

// settled reports a FlinkBlueGreenDeployment the controller has handled at
// its generation, active and with no rollout under way; or gone.
func settled(t *testing.T, ns, name string) bool {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, p)
	if apierrors.IsNotFound(err) {
		return true
	}
	require.NoError(t, err)
	s := p.Status
	if s.ObservedGeneration < p.Generation || (s.BlueGreenState != v1alpha1.ActiveBlue && s.BlueGreenState != v1alpha1.ActiveGreen) {
		return false
	}
	if s.JobStatus.State != v1alpha1.JobRunning && s.JobStatus.State != v1alpha1.JobSuspended {
		return false
	}
	if n := len(s.History); n > 0 && s.History[n-1].Outcome == v1alpha1.RolloutInProgress {
		return false
	}
	return true
}

// observed is what the controller did to the job b describes.
func observed(t *testing.T, b before) string {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: b.ns, Name: b.name}, p)
	if apierrors.IsNotFound(err) {
		if snapshotRecord(t, b.ns, b.name) {
			return effectDelete
		}
		return effectStops
	}
	require.NoError(t, err)
	if g, ok := childOf(t, b.ns, b.name+"-green"); ok || p.Status.ActiveDeployment == b.name+"-green" {
		if ok {
			if sp, _, _ := unstructured.NestedString(g.Object, "spec", "job", "initialSavepointPath"); sp != "" {
				return effectNewColour
			}
		}
		return effectEmpty
	}
	blue, ok := childOf(t, b.ns, b.name+"-blue")
	switch {
	case !ok || blue.GetUID() != b.uid:
		return effectRecreated
	case p.Spec.Template.Spec.Suspended():
		if st, _, _ := unstructured.NestedString(blue.Object, "spec", "job", "state"); st == v1alpha1.JobStateSuspended {
			return effectSuspend
		}
		return "suspended in Git, blue still running"
	case blue.GetGeneration() != b.generation:
		return effectPatch
	}
	return effectNothing
}

// agreeCase is a change a pull request makes to a running stateful job.
type agreeCase struct {
	name string
	// head changes the job's head (revision 2); nil: the head removes it.
	head func(p *v1alpha1.FlinkBlueGreenDeployment)
	// want is the effect both should tell: a check of the vocabulary
	// itself, so that an agreement on the wrong thing fails too.
	want string
}

var agreeCases = []agreeCase{
	{name: "image", want: effectNewColour, head: func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Image = "flink:1.20.1"
	}},
	{name: "parallelism-default", want: effectPatch, head: func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.FlinkConfiguration = &apiextensionsv1.JSON{
			Raw: []byte(`{"state.savepoints.dir":"file:///flink-sp","parallelism.default":"4"}`)}
	}},
	{name: "suspend", want: effectSuspend, head: func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	}},
	{name: "ignored-grace-period", want: effectNothing, head: func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration["kubernetes.operator.bluegreen.abort.grace-period"] = "9 min"
	}},
	{name: "revert-to-running", want: effectNothing, head: func(*v1alpha1.FlinkBlueGreenDeployment) {}},
	{name: "removal", want: effectDelete},
}

// TestThePlanAgreesWithWhatTheControllerDoes: for each change to a running
// stateful job (ACTIVE_BLUE, upgradeMode savepoint), the plan of the head
// is computed, then the head is applied as the controller's sync applies
// it (server-side apply as its field manager; a removal deletes, as its
// prune does) and the controller's effect observed once it settles.
func TestThePlanAgreesWithWhatTheControllerDoes(t *testing.T) {
	for _, c := range agreeCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			plan, did := planAndApply(t, c)
			assert.Equal(t, c.want, plan, "case %s: the plan's effect", c.name)
			assert.Equal(t, plan, did, "case %s: the plan says %q, the controller did %q", c.name, plan, did)
		})
	}
}

// planAndApply deploys the job, plans c's head and applies it; it returns
// the plan's effect and the controller's.
func planAndApply(t *testing.T, c agreeCase) (string, string) {
	t.Helper()
	ctx := context.Background()
	ns := reconciletest.Namespace(t, env.Client)
	const name = "orders"
	p := fbgd(t, ns, name, 1, "flink:1.20.0", "savepoint")
	deploy(t, p)
	b := running(t, ns, name)

	var r *prplan.Result
	if c.head == nil {
		gr := applied(t, ns, p)
		r = plan(t, prplan.Input{GitRepository: gr}, object(t, configMap(ns, "settings")))
		require.NoError(t, env.Client.Delete(ctx, live(t, ns, name)))
	} else {
		head := fbgd(t, ns, name, 2, "flink:1.20.0", "savepoint")
		c.head(head)
		u := object(t, head)
		r = plan(t, prplan.Input{}, u)
		require.NoError(t, objects.Apply(ctx, env.Client, u))
	}
	effect := effectNothing // a head that changes nothing of the job plans no job
	for _, j := range r.Jobs {
		if j.Name == name {
			effect = planned(j)
			t.Logf("case %s: plan %s: %s; facts %q", c.name, j.Action, r.Summary(), j.Facts)
		}
	}

	require.Eventually(t, func() bool { return settled(t, ns, name) }, waitFor, 100*time.Millisecond, "case %s: the controller settles", c.name)
	// Settled at the head's generation; a moment more shows a late effect.
	time.Sleep(time.Second)
	require.Eventually(t, func() bool { return settled(t, ns, name) }, waitFor, 100*time.Millisecond, "case %s: the controller settles", c.name)
	did := observed(t, b)
	l := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, l); err == nil {
		t.Logf("case %s: controller: %s active %s job %s history %+v", c.name, l.Status.BlueGreenState, l.Status.ActiveDeployment, l.Status.JobStatus.State, l.Status.History)
	}
	return effect, did
}

// TestThePlanAgreesDuringATransition: a change pushed while a transition
// waits for manual promotion (TRANSITIONING_TO_GREEN, green started from a
// savepoint of blue). The plan says a new colour from a savepoint; the
// controller deletes green and starts it again, with the head's spec, from
// a savepoint.
func TestThePlanAgreesDuringATransition(t *testing.T) {
	ctx := context.Background()
	ns := reconciletest.Namespace(t, env.Client)
	const name = "orders"
	manual := func(p *v1alpha1.FlinkBlueGreenDeployment) *v1alpha1.FlinkBlueGreenDeployment {
		p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
		return p
	}
	deploy(t, manual(fbgd(t, ns, name, 1, "flink:1.20.0", "savepoint")))
	require.NoError(t, objects.Apply(ctx, env.Client, object(t, manual(fbgd(t, ns, name, 2, "flink:1.20.1", "savepoint")))))
	inFlight := func(image string) bool {
		l := live(t, ns, name)
		g, ok := childOf(t, ns, name+"-green")
		if !ok || l.Status.ObservedGeneration < l.Generation || l.Status.BlueGreenState != v1alpha1.TransitioningToGreen ||
			l.Status.Savepoint == nil || l.Status.Savepoint.Path == "" {
			return false
		}
		img, _, _ := unstructured.NestedString(g.Object, "spec", "image")
		return img == image
	}
	require.Eventually(t, func() bool { return inFlight("flink:1.20.1") }, waitFor, 100*time.Millisecond, "the transition to 1.20.1 waits for promotion")
	old, _ := childOf(t, ns, name+"-green")

	head := object(t, manual(fbgd(t, ns, name, 3, "flink:1.20.2", "savepoint")))
	r := plan(t, prplan.Input{}, head)
	j := job(t, r, name)
	t.Logf("plan %s: %s; facts %q", j.Action, r.Summary(), j.Facts)
	require.NoError(t, objects.Apply(ctx, env.Client, head))

	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) && !inFlight("flink:1.20.2") {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	l := live(t, ns, name)
	did := effectNothing
	if g, ok := childOf(t, ns, name+"-green"); ok {
		img, _, _ := unstructured.NestedString(g.Object, "spec", "image")
		sp, _, _ := unstructured.NestedString(g.Object, "spec", "job", "initialSavepointPath")
		switch {
		case img != "flink:1.20.2":
			did = effectNothing
		case g.GetUID() != old.GetUID() && sp != "":
			did = effectNewColour
		case g.GetUID() != old.GetUID():
			did = effectEmpty
		default:
			did = effectPatch
		}
		t.Logf("controller: %s active %s green image %s from %q (was %s) history %+v", l.Status.BlueGreenState,
			l.Status.ActiveDeployment, img, sp, old.GetUID(), l.Status.History)
	} else if l.Status.ActiveDeployment == name+"-blue" {
		did = "back to blue, no green"
	}
	assert.Equal(t, effectNewColour, planned(j), "case in-flight: the plan's effect")
	assert.Equal(t, planned(j), did, "case in-flight: the plan says %q, the controller did %q", planned(j), did)
}
