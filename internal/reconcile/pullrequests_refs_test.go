/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// pushHead commits files under deploy/ on top of main and pushes the
// commit as ref only (main does not move); it returns the commit.
func (f *gitFixture) pushHead(ref string, files map[string]string) string {
	prefixed := map[string]string{}
	for k, v := range files {
		prefixed["deploy/"+k] = v
	}
	f.repo.Git("checkout", "--quiet", "-B", "head", "main")
	sha := f.repo.Commit(prefixed, "head "+ref)
	f.repo.Git("checkout", "--quiet", "main")
	f.repo.ForcePush("head:" + ref)
	return sha
}

// requestPlan is what a pull-request webhook does.
func (f *gitFixture) requestPlan() string {
	gr := f.get()
	patch := client.MergeFrom(gr.DeepCopy())
	at := time.Now().Format(time.RFC3339Nano)
	if gr.Annotations == nil {
		gr.Annotations = map[string]string{}
	}
	gr.Annotations[v1alpha1.PlanRequestedAtAnnotation] = at
	require.NoError(f.t, env.Client.Patch(f.t.Context(), gr, patch))
	return at
}

// planned are status.pullRequests as number → head SHA, once none is
// Pending.
func planned(gr *v1alpha1.GitRepository) (map[int64]string, bool) {
	out := map[int64]string{}
	for _, p := range gr.Status.PullRequests {
		if p.Outcome == v1alpha1.PlanPending {
			return nil, false
		}
		out[p.Number] = p.HeadSHA
	}
	return out, true
}

func (f *gitFixture) waitPlanned(want map[int64]string) *v1alpha1.GitRepository {
	var gr *v1alpha1.GitRepository
	eventually(f.t, f.ns, fmt.Sprintf("pull requests %v planned", want), func() bool {
		gr = f.get()
		got, ok := planned(gr)
		return ok && fmt.Sprint(got) == fmt.Sprint(want)
	})
	return gr
}

// syncFacts is what the sync owns in status, as a plan pass must leave it;
// the generation observed is left out (setting spec.pullRequests is a new
// generation, which the sync observes).
func syncFacts(gr *v1alpha1.GitRepository) any {
	conds := slices.Clone(gr.Status.Conditions)
	for i := range conds {
		conds[i].ObservedGeneration = 0
	}
	return []any{conds, gr.Status.LastHandledReconcileAt, gr.Status.Artifact,
		gr.Status.LastAppliedRevision, gr.Status.Inventory, gr.Status.CommitStatuses}
}

// TestRefPatternHeadsArePlannedOncePerSHAWithoutTouchingTheSync: with
// spec.pullRequests.refPattern the heads come from the repository's refs
// (the number is what '*' matched), the newest max of them; each head SHA
// is planned once (the plan's outcome is prplan's, whatever it is), a new
// SHA on a request, a deleted ref dropped; the sync's conditions,
// lastHandledReconcileAt and artifact stay as they were.
func TestRefPatternHeadsArePlannedOncePerSHAWithoutTouchingTheSync(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass")
	f.waitApplied(rev)
	before := syncFacts(f.get())

	head := func(n int, v string) string {
		return f.pushHead(fmt.Sprintf("refs/pull/%d/head", n), map[string]string{"a.yaml": fmt.Sprintf(configMap, "a", v)})
	}
	h1, h2, h3 := head(1, "pr1"), head(2, "pr2"), head(3, "pr3")
	gr := f.get()
	patch := client.MergeFrom(gr.DeepCopy())
	gr.Spec.PullRequests = &v1alpha1.PullRequestsSpec{RefPattern: "refs/pull/*/head", Max: 2}
	require.NoError(t, env.Client.Patch(t.Context(), gr, patch))
	gr = f.waitPlanned(map[int64]string{2: h2, 3: h3})
	for _, p := range gr.Status.PullRequests {
		assert.NotEmpty(t, p.Summary, "pull request %d: the plan says something", p.Number)
		assert.False(t, p.Time.IsZero())
	}
	assert.Equal(t, before, syncFacts(gr), "planning changed nothing of the sync")
	first := gr.Status.PullRequests

	// A new push to #3 is planned on request; #2 is not planned again.
	h3b := head(3, "pr3b")
	at := f.requestPlan()
	gr = f.waitPlanned(map[int64]string{2: h2, 3: h3b})
	eventually(t, ns, "the plan request acknowledged", func() bool { return f.get().Status.LastHandledPlanAt == at })
	i := slices.IndexFunc(gr.Status.PullRequests, func(p v1alpha1.PullRequestPlan) bool { return p.Number == 2 })
	assert.Equal(t, first[0], gr.Status.PullRequests[i], "#2's head did not move: its plan is the same")

	// #3 closes (its ref goes): #1 moves up into max.
	f.repo.Git("push", "--quiet", "origin", ":refs/pull/3/head")
	f.requestPlan()
	gr = f.waitPlanned(map[int64]string{1: h1, 2: h2})
	assert.Equal(t, before, syncFacts(gr), "planning changed nothing of the sync")
	assert.True(t, apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition))
	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "a"}, cm))
	assert.Equal(t, "1", cm.Data["key"], "no head was applied")
}

// TestAPlanRefusesWhatAConfinedApplyRefuses: a GitRepository confined to
// its namespace (no --cluster-wide-namespaces) whose head adds an object
// of another namespace gets a failed plan naming it, as its apply would
// refuse it, even when the applying identity may write there.
func TestAPlanRefusesWhatAConfinedApplyRefuses(t *testing.T) {
	ns, victim := newNamespace(t), newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	inNamespace := func(name, target string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {key: v}\n", name, target)
	}
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": inNamespace("a", ns)})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.TargetNamespace = ""
		gr.Spec.PullRequests = &v1alpha1.PullRequestsSpec{RefPattern: "refs/pull/*/head"}
	})
	f.waitApplied(rev)
	sha := f.pushHead("refs/pull/1/head", map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml, b.yaml"), "b.yaml": inNamespace("b", victim)})
	f.requestPlan()
	gr := f.waitPlanned(map[int64]string{1: sha})
	assert.Equal(t, v1alpha1.PlanFailed, gr.Status.PullRequests[0].Outcome)
	assert.Contains(t, gr.Status.PullRequests[0].Summary, victim)
	assert.False(t, configMapExists(victim, "b"))
}

// TestPullRequestsWithoutAForgeSaySoAndLeaveTheSyncAlone: listing pull
// requests through the forge without spec.commitStatus is a Warning event
// that says what to set; the sync goes on, its status untouched.
func TestPullRequestsWithoutAForgeSaySoAndLeaveTheSyncAlone(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.PullRequests = &v1alpha1.PullRequestsSpec{} })
	f.waitApplied(rev)
	eventually(t, ns, "a PullRequestsMisconfigured event", func() bool {
		notes := eventNotes(t, ns, v1alpha1.GitRepositoryKind, "flink", "PullRequestsMisconfigured")
		return len(notes) > 0 && strings.Contains(notes[0], "spec.commitStatus") && strings.Contains(notes[0], "refPattern")
	})
	gr := f.get()
	assert.Empty(t, gr.Status.PullRequests)
	assert.True(t, apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition))
	assert.Len(t, gr.Status.Conditions, 1, "no condition but the sync's Ready")
}
