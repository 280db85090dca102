/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// plan_test.go: Plan against a real API server with the controllers and the
// Flink simulator running: what each change does to the running jobs.

package prplan_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/prplan"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

func hasFact(t *testing.T, j prplan.Job, part string) {
	t.Helper()
	for _, f := range j.Facts {
		if strings.Contains(f, part) {
			return
		}
	}
	t.Errorf("no fact of %s says %q: %q", j.Name, part, j.Facts)
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
}

func TestImageChangeOfRunningJobIsBlueGreenFromItsColour(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	deploy(t, fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint"))

	r := plan(t, prplan.Input{PullRequest: status.PullRequest{Number: 7, Title: "orders: 1.20.1"}},
		object(t, fbgd(t, ns, "orders", 2, "flink:1.20.1", "savepoint")), object(t, configMap(ns, "settings")))

	j := job(t, r, "orders")
	assert.Equal(t, review.ActionTransitionSavepoint, j.Action)
	hasFact(t, j, "orders-blue runs now (ACTIVE_BLUE)")
	hasFact(t, j, "takes a savepoint of orders-blue and starts orders-green from it")
	hasFact(t, j, "orders-green must be ready within 7m0s")
	assert.False(t, j.StopsWithoutSavepoint)
	assert.Equal(t, v1alpha1.PlanSucceeded, r.Outcome())
	assert.Equal(t, "orders: blue/green with savepoint from orders-blue; 1 ConfigMap added", r.Summary())
	md := r.Markdown("<!-- bg-gitops/plan/x/y -->")
	assert.True(t, strings.HasPrefix(md, "<!-- bg-gitops/plan/x/y -->\n"), md)
	assert.Contains(t, md, "pull request #7 (orders: 1.20.1)")
	assert.Contains(t, md, "| "+ns+"/orders | blue/green with savepoint from orders-blue | ")
	assert.Contains(t, md, "### bg-gitops diff", "review's diff follows")
	assert.Contains(t, r.Text(), "job "+ns+"/orders: blue/green with savepoint from orders-blue")
}

func TestChangeDuringTransitionSupersedesIt(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	p := fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint")
	p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	deploy(t, p)
	next := fbgd(t, ns, "orders", 2, "flink:1.20.1", "savepoint")
	next.Spec.Promotion = p.Spec.Promotion
	commit(t, next)
	// Manual promotion holds the transition once green is ready.
	require.Eventually(t, func() bool {
		l := live(t, ns, "orders")
		return l.Status.BlueGreenState == v1alpha1.TransitioningToGreen && l.Status.Savepoint != nil && l.Status.Savepoint.Path != ""
	}, waitFor, 100*time.Millisecond)

	head := fbgd(t, ns, "orders", 3, "flink:1.20.2", "savepoint")
	head.Spec.Promotion = p.Spec.Promotion
	r := plan(t, prplan.Input{}, object(t, head))

	j := job(t, r, "orders")
	assert.Equal(t, review.ActionTransitionSavepoint, j.Action)
	hasFact(t, j, "a rollout of main@sha1:"+strings.Repeat("0", 39)+"2 is in flight (TRANSITIONING_TO_GREEN)")
	hasFact(t, j, "this change supersedes it: orders-green is deleted and started again with this change's spec, from a fresh savepoint of orders-blue")
	hasFact(t, j, "promotion is Manual: orders-blue stays active until `bg-gitops promote fbgd orders -n "+ns+"`")
	assert.Equal(t, v1alpha1.PlanSucceeded, r.Outcome())
}

func TestConfigMapTheApplyingAccountCannotWriteFailsWithTheAPIReason(t *testing.T) {
	ctx := context.Background()
	ns := reconciletest.Namespace(t, env.Client)
	other := reconciletest.Namespace(t, env.Client)
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "applier", Namespace: ns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "applier", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "create", "patch"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "applier", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "applier"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "applier", Namespace: ns}}},
	} {
		require.NoError(t, env.Client.Create(ctx, obj))
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":applier"}
	applier, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	require.NoError(t, err)

	r := plan(t, prplan.Input{Applier: applier}, object(t, configMap(ns, "mine")), object(t, configMap(other, "theirs")))

	require.Len(t, r.Refused, 1)
	assert.Equal(t, "ConfigMap "+other+"/theirs", r.Refused[0].Object)
	assert.Contains(t, r.Refused[0].Reason, `User "system:serviceaccount:`+ns+`:applier" cannot patch resource "configmaps"`)
	assert.Equal(t, v1alpha1.PlanFailed, r.Outcome())
	assert.True(t, strings.HasPrefix(r.Summary(), "dry-run refused ConfigMap "+other+"/theirs: configmaps \"theirs\" is forbidden"), r.Summary())
	assert.LessOrEqual(t, len(r.Summary()), 140)
	assert.Equal(t, map[string]review.Change{"ConfigMap " + ns + "/mine": review.Added}, changes(r.Report))
}

func changes(rep *review.Report) map[string]review.Change {
	m := map[string]review.Change{}
	for _, o := range rep.Objects {
		m[o.ID()] = o.Change
	}
	return m
}

// applied is a GitRepository whose inventory lists the live objects, which
// carry its source annotation as an apply stamps them.
func applied(t *testing.T, ns string, objs ...client.Object) *v1alpha1.GitRepository {
	t.Helper()
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jobs"}}
	gr.Status.Inventory = &v1alpha1.Inventory{}
	for _, obj := range objs {
		u := object(t, obj)
		require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), u))
		patch := client.MergeFrom(u.DeepCopy())
		ann := u.GetAnnotations()
		ann[v1alpha1.SourceAnnotation] = ns + "/jobs"
		u.SetAnnotations(ann)
		require.NoError(t, env.Client.Patch(context.Background(), u, patch))
		gr.Status.Inventory.Entries = append(gr.Status.Inventory.Entries,
			v1alpha1.ObjectRef{ID: objects.Key(u).String(), Version: u.GroupVersionKind().Version})
	}
	return gr
}

func TestRemovingRunningStatefulJobTakesAFinalSavepoint(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	p := fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint")
	deploy(t, p)
	gr := applied(t, ns, p)

	r := plan(t, prplan.Input{GitRepository: gr}, object(t, configMap(ns, "settings")))

	j := job(t, r, "orders")
	assert.Equal(t, review.ActionDelete, j.Action)
	hasFact(t, j, "stops orders-blue after a final savepoint")
	hasFact(t, j, "the savepoint is kept as the record of orders")
	assert.False(t, j.StopsWithoutSavepoint)
	assert.Equal(t, v1alpha1.PlanSucceeded, r.Outcome())
}

func TestRemovingOrRenamingARunningJobWithoutSavepointFails(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	stateless := fbgd(t, ns, "clicks", 1, "flink:1.20.0", "stateless")
	stateful := fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint")
	deploy(t, stateless)
	deploy(t, stateful)
	gr := applied(t, ns, stateless, stateful)

	t.Run("stateless removed", func(t *testing.T) {
		r := plan(t, prplan.Input{GitRepository: gr}, object(t, stateful))
		j := job(t, r, "clicks")
		assert.True(t, j.StopsWithoutSavepoint)
		hasFact(t, j, "stops clicks-blue with no savepoint: upgradeMode stateless keeps no state")
		assert.Equal(t, v1alpha1.PlanFailed, r.Outcome())
		assert.Equal(t, "clicks: stops its job without a savepoint", r.Summary())
	})
	t.Run("stateful renamed without restore-from", func(t *testing.T) {
		renamed := fbgd(t, ns, "orders-v2", 1, "flink:1.20.0", "savepoint")
		r := plan(t, prplan.Input{GitRepository: gr}, object(t, stateless), object(t, renamed))
		j := job(t, r, "orders")
		assert.True(t, j.StopsWithoutSavepoint)
		hasFact(t, j, "orders-v2 is added and starts from empty state")
		assert.Equal(t, v1alpha1.PlanFailed, r.Outcome())
	})
	t.Run("stateful renamed with restore-from", func(t *testing.T) {
		renamed := fbgd(t, ns, "orders-v2", 1, "flink:1.20.0", "savepoint")
		renamed.Annotations[v1alpha1.RestoreFromAnnotation] = "orders"
		r := plan(t, prplan.Input{GitRepository: gr}, object(t, stateless), object(t, renamed))
		j := job(t, r, "orders")
		assert.False(t, j.StopsWithoutSavepoint)
		hasFact(t, j, "orders-v2 is added and starts from that savepoint")
		assert.Equal(t, v1alpha1.PlanSucceeded, r.Outcome())
	})
}

func TestClosedRolloutWindowSaysWhenTheNextOpens(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	// Stamped as the GitRepository's own: the controller changes no other.
	stamp := func(p *v1alpha1.FlinkBlueGreenDeployment) *v1alpha1.FlinkBlueGreenDeployment {
		p.Annotations[v1alpha1.SourceAnnotation] = ns + "/jobs"
		return p
	}
	deploy(t, stamp(fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint")))
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jobs"}}
	gr.Spec.RolloutWindows = []v1alpha1.RolloutWindow{{Schedule: "0 2 * * 2", Duration: metav1.Duration{Duration: 2 * time.Hour}}}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC) // a Thursday

	r := plan(t, prplan.Input{GitRepository: gr, Now: now}, object(t, stamp(fbgd(t, ns, "orders", 2, "flink:1.20.1", "savepoint"))))

	hasFact(t, job(t, r, "orders"), "the rollout window is closed: no new colour starts until it opens at 2026-12-08T02:00:00Z")
	assert.Equal(t, v1alpha1.PlanSucceeded, r.Outcome())
}

// The controller's apply check rejects such a child and keeps its
// namespace out: the plan fails.
func TestARefusedChildCheckFailsThePlan(t *testing.T) {
	r := &prplan.Result{Report: &review.Report{Objects: []review.Object{{
		APIVersion: "bggitops.dev/v1alpha1", Kind: "FlinkBlueGreenDeployment", Namespace: "team-a", Name: "orders",
		Change: review.Changed, Deployment: &review.Plan{Action: review.ActionTransitionSavepoint,
			Check: "will be refused: its FlinkDeployment child would be rejected: spec.taskManager.resource.cpu"}}}},
		Jobs: []prplan.Job{{Namespace: "team-a", Name: "orders", Action: review.ActionTransitionSavepoint, Running: "orders-blue"}}}
	assert.Equal(t, v1alpha1.PlanFailed, r.Outcome(), "summary: %s", r.Summary())
}

// Plan itself asks the controller's child check (Input.CheckChild): a
// child the cluster would reject fails the plan.
func TestPlanRunsTheChildCheckAndARefusalFailsIt(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	check := func(_ context.Context, _ client.Client, obj *unstructured.Unstructured) (string, error) {
		return "", &apply.RejectedError{Err: errors.New("FlinkDeployment " + obj.GetName() + "-blue: spec.job.parallelism: must be positive")}
	}
	r := plan(t, prplan.Input{CheckChild: check}, object(t, fbgd(t, ns, "orders", 1, "flink:1.20.0", "savepoint")))
	require.Len(t, r.Report.Objects, 1)
	assert.True(t, r.Report.Objects[0].Deployment.WillBeRefused(), r.Report.Objects[0].Deployment.Check)
	assert.Equal(t, v1alpha1.PlanFailed, r.Outcome(), r.Summary())
}

// A refused Secret's reason hides every detail, as the controller's apply
// hides it (apply.APIError): the API server's message may quote a value.
func TestARefusedSecretsReasonHidesItsDetails(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds", Labels: map[string]string{"token": "s3cr3t value!"}},
		StringData: map[string]string{"password": "hunter2"}}
	r := plan(t, prplan.Input{}, object(t, s))
	require.Len(t, r.Refused, 1)
	assert.NotContains(t, r.Refused[0].Reason, "s3cr3t")
	assert.Contains(t, r.Refused[0].Reason, "details hidden: secret")
}
