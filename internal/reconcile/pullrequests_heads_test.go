/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
)

func numbers(prs []status.PullRequest) []int64 {
	out := []int64{}
	for _, pr := range prs {
		out = append(out, pr.Number)
	}
	return out
}

func TestRefPatternMatchesNumberedHeadsNewestFirst(t *testing.T) {
	refs := map[string]string{
		"refs/heads/main":            "a",
		"refs/pull/7/head":           "b",
		"refs/pull/12/head":          "c",
		"refs/pull/12/merge":         "d",
		"refs/pull/x/head":           "e",
		"refs/pull/0/head":           "f",
		"refs/pull/-3/head":          "g",
		"refs/pull//head":            "h",
		"refs/merge-requests/9/head": "i",
	}
	got := matchRefs(refs, "refs/pull/*/head")
	assert.Equal(t, []int64{12, 7}, numbers(got))
	assert.Equal(t, status.PullRequest{Number: 12, HeadSHA: "c", HeadRef: "refs/pull/12/head"}, got[0])
	assert.Equal(t, []int64{9}, numbers(matchRefs(refs, "refs/merge-requests/*/head")))
}

func TestSelectHeadsSkipsThenCutsToMax(t *testing.T) {
	prs := []status.PullRequest{
		{Number: 5, Author: "bot", Labels: []string{"deps"}},
		{Number: 4, Author: "ann", Labels: []string{"wip"}},
		{Number: 3, Author: "bob"},
		{Number: 2, Author: "renovate"},
		{Number: 1, Author: "cem", Labels: []string{"ok"}},
	}
	many := make([]status.PullRequest, 30)
	for i := range many {
		many[i] = status.PullRequest{Number: int64(30 - i)}
	}
	for _, tc := range []struct {
		name string
		spec v1alpha1.PullRequestsSpec
		in   []status.PullRequest
		want []int64
	}{
		{"nothing skipped", v1alpha1.PullRequestsSpec{}, prs, []int64{5, 4, 3, 2, 1}},
		{"max", v1alpha1.PullRequestsSpec{Max: 2}, prs, []int64{5, 4}},
		{"default max is 20", v1alpha1.PullRequestsSpec{}, many, numbers(many[:20])},
		{"labels", v1alpha1.PullRequestsSpec{SkipLabels: []string{"wip", "deps"}}, prs, []int64{3, 2, 1}},
		{"authors", v1alpha1.PullRequestsSpec{SkipAuthors: []string{"renovate", "bot"}}, prs, []int64{4, 3, 1}},
		{"skipped ones leave room", v1alpha1.PullRequestsSpec{Max: 2, SkipLabels: []string{"wip", "deps"}}, prs, []int64{3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, numbers(selectHeads(tc.in, &tc.spec)))
		})
	}
}

func TestClosedPullRequestsAreDroppedAndPlansStaySorted(t *testing.T) {
	at := metav1.Now()
	plans := []v1alpha1.PullRequestPlan{{Number: 1, HeadSHA: "a", Time: at}, {Number: 3, HeadSHA: "c", Time: at}}
	kept := listedPlans(plans, []status.PullRequest{{Number: 3}, {Number: 2}})
	assert.Equal(t, []v1alpha1.PullRequestPlan{{Number: 3, HeadSHA: "c", Time: at}}, kept)
	kept = putPlan(kept, v1alpha1.PullRequestPlan{Number: 2, HeadSHA: "b", Time: at})
	kept = putPlan(kept, v1alpha1.PullRequestPlan{Number: 3, HeadSHA: "d", Time: at})
	assert.Equal(t, []v1alpha1.PullRequestPlan{{Number: 2, HeadSHA: "b", Time: at}, {Number: 3, HeadSHA: "d", Time: at}}, kept)
}

func TestAPlanRequestWakesThePlannerNotTheSync(t *testing.T) {
	gr := func(ann map[string]string, prs bool) *v1alpha1.GitRepository {
		g := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
		if prs {
			g.Spec.PullRequests = &v1alpha1.PullRequestsSpec{}
		}
		return g
	}
	plan := map[string]string{v1alpha1.PlanRequestedAtAnnotation: "1"}
	both := map[string]string{v1alpha1.PlanRequestedAtAnnotation: "1", v1alpha1.ReconcileRequestedAtAnnotation: "1"}
	sync, planner := annotationsChangedBut(v1alpha1.PlanRequestedAtAnnotation), annotationChanged(v1alpha1.PlanRequestedAtAnnotation)
	update := func(old, new *v1alpha1.GitRepository) event.UpdateEvent {
		return event.UpdateEvent{ObjectOld: old, ObjectNew: new}
	}
	assert.False(t, sync.Update(update(gr(nil, true), gr(plan, true))), "a plan request does not wake the sync")
	assert.True(t, sync.Update(update(gr(plan, true), gr(both, true))), "a reconcile request does")
	assert.True(t, planner.Update(update(gr(nil, true), gr(plan, true))))
	assert.False(t, planner.Update(update(gr(plan, true), gr(both, true))))
	assert.False(t, plansPullRequests.Update(update(gr(nil, false), gr(plan, false))), "nothing to plan")
	assert.True(t, plansPullRequests.Update(update(gr(nil, true), gr(nil, false))), "removed: its plans are dropped")
}
