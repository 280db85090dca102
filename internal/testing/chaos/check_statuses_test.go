/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package chaos

import (
	"sort"
	"strings"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// The commit-status invariants on one commit and context: what may follow
// what, and what each kind of commit may get.
func TestStatusInvariants(t *testing.T) {
	const sync, rollout = "bg-gitops/sync/team-a/alpha", "bg-gitops/rollout/team-a/orders"
	st := func(state, desc string) gitea.Status {
		return gitea.Status{State: state, Description: desc, Created: time.Now()}
	}
	cases := []struct {
		name    string
		broken  bool
		context string
		list    []gitea.Status
		final   bool
		want    []string
	}{
		{"a rollout", false, rollout, []gitea.Status{st("pending", "taking a savepoint"), st("pending", "starting"), st("success", "active")}, true, nil},
		{"posted twice", false, rollout, []gitea.Status{st("pending", "starting"), st("pending", "starting"), st("success", "active")}, true, []string{invStatusOnce}},
		{"after a rollout's success", false, rollout, []gitea.Status{st("success", "active"), st("failure", "superseded")}, true, []string{invStatusOnce}},
		{"a sync may fail after success", false, sync, []gitea.Status{st("success", "applied"), st("failure", "apply failed"), st("success", "applied")}, true, nil},
		{"eight pending", false, rollout, []gitea.Status{st("pending", "a"), st("pending", "b"), st("pending", "a"), st("pending", "b"),
			st("pending", "a"), st("pending", "b"), st("pending", "a"), st("pending", "b"), st("failure", "aborted")}, true, []string{invStatusBound}},
		{"rollout on a commit that does not build", true, rollout, []gitea.Status{st("success", "no change")}, true, []string{invStatusCommit}},
		{"sync success on a commit that does not build", true, sync, []gitea.Status{st("success", "applied")}, true, []string{invStatusOutcome}},
		{"another repository's context", false, "bg-gitops/sync/team-b/beta", []gitea.Status{st("success", "applied")}, true, []string{invStatusCommit}},
		{"left pending", false, sync, []gitea.Status{st("pending", "applying")}, true, []string{invStatusNotLost}},
		{"pending during the run", false, sync, []gitea.Status{st("pending", "applying")}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			commit := &Commit{Push: &Push{Repo: "alpha", Broken: tc.broken, Specs: map[string]jobSpec{}}, SHA: "1111", Revision: "main@sha1:1111"}
			c := newTestChecker(commit)
			c.checkContext(commit, tc.context, tc.list, nil, tc.final)
			var got []string
			for _, v := range c.violations {
				got = append(got, v.Invariant)
			}
			sort.Strings(got)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("violations %q, want %q: %+v", got, tc.want, c.violations)
			}
		})
	}
}
