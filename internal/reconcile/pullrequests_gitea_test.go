/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// giteaAPI calls Gitea's API as its admin (the pull-request calls the
// harness does not have).
func giteaAPI(t *testing.T, forge *gitea.Server, method, path string, in, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		require.NoError(t, err)
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, forge.URL+"/api/v1"+path, body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "token "+forge.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	require.Equalf(t, 2, resp.StatusCode/100, "%s %s: %s", method, path, data)
	if out != nil {
		require.NoError(t, json.Unmarshal(data, out))
	}
}

// giteaPulls is the pull-request side of a Gitea repository, from a
// working clone that pushes branches to it.
type giteaPulls struct {
	t     *testing.T
	f     *gitFixture
	forge *gitea.Server
	repo  string
}

func (g giteaPulls) path(rest string) string {
	return "/repos/" + g.forge.AdminUser + "/" + g.repo + rest
}

// pushBranch commits files under deploy/ on branch (made from main when
// fromMain) and pushes the branch to Gitea; it returns the commit.
func (g giteaPulls) pushBranch(branch string, fromMain bool, files map[string]string) string {
	if fromMain {
		g.f.repo.Git("checkout", "--quiet", "-B", branch, "main")
	} else {
		g.f.repo.Git("checkout", "--quiet", branch)
	}
	prefixed := map[string]string{}
	for k, v := range files {
		prefixed["deploy/"+k] = v
	}
	sha := g.f.repo.Commit(prefixed, "change on "+branch)
	g.f.repo.Git("checkout", "--quiet", "main")
	g.f.repo.Git("push", "--quiet", "--force", g.forge.AuthCloneURL(g.repo), branch+":"+branch)
	return sha
}

func (g giteaPulls) open(branch string) int64 {
	var pr struct {
		Number int64 `json:"number"`
	}
	giteaAPI(g.t, g.forge, http.MethodPost, g.path("/pulls"), map[string]any{"head": branch, "base": "main", "title": "change " + branch}, &pr)
	return pr.Number
}

func (g giteaPulls) close(n int64) {
	giteaAPI(g.t, g.forge, http.MethodPatch, g.path(fmt.Sprintf("/pulls/%d", n)), map[string]any{"state": "closed"}, nil)
}

type giteaComment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
}

func (g giteaPulls) comments(n int64) []giteaComment {
	var out []giteaComment
	giteaAPI(g.t, g.forge, http.MethodGet, g.path(fmt.Sprintf("/issues/%d/comments", n)), nil, &out)
	return out
}

// headRevision is the revision of a pull request's head, as planned.
func headRevision(n int64, sha string) string {
	return v1alpha1.FormatRevision(fmt.Sprintf("refs/pull/%d/head", n), sha)
}

// planStates are the states of the plan statuses on rev, oldest first.
func planStates(t *testing.T, forge *gitea.Server, repo, rev, context string) []string {
	var out []string
	for _, s := range forgeStatuses(t, forge, repo, rev, context) {
		out = append(out, s.State)
	}
	return out
}

// waitVerdict waits for a verdict (not pending) of context on rev and for
// status.pullRequests to record it (after the comment), and returns it.
func waitVerdict(t *testing.T, f *gitFixture, forge *gitea.Server, n int64, sha, context string) gitea.Status {
	t.Helper()
	var last gitea.Status
	eventually(t, f.ns, fmt.Sprintf("a verdict of %s on #%d at %s", context, n, sha), func() bool {
		list := forgeStatuses(t, forge, forgeRepoName, headRevision(n, sha), context)
		if len(list) == 0 {
			return false
		}
		last = list[len(list)-1]
		return last.State != "pending" && slices.ContainsFunc(f.get().Status.PullRequests, func(p v1alpha1.PullRequestPlan) bool {
			return p.Number == n && p.HeadSHA == sha && p.Outcome != v1alpha1.PlanPending
		})
	})
	return last
}

// TestPullRequestPlansAgainstGitea, against a real Gitea, the real API
// server and the simulator: a pull request that changes the image of the
// running job gets pending, then success naming blue/green with a
// savepoint of the running colour, and one plan comment; a second push
// gets its own statuses and edits the same comment; a closed pull request
// leaves status.pullRequests; one whose ConfigMap targets another
// namespace gets failure from the dry-run as the applying identity.
func TestPullRequestPlansAgainstGitea(t *testing.T) {
	ns, victim := newNamespace(t), newNamespace(t)
	startController(t, ns)
	// The applying identity may write its own namespace only.
	require.NoError(t, env.Client.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}}))
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	grant(t, ns, "deployer", "deployer", rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"flinkbluegreendeployments"}, Verbs: all},
		rbacv1.PolicyRule{APIGroups: []string{"flink.apache.org"}, Resources: []string{"flinkdeployments", "flinkstatesnapshots"}, Verbs: all},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: all})
	f := newGitFixture(t, ns)
	forge, push := withForge(t, f, ns)
	g := giteaPulls{t: t, f: f, forge: forge, repo: forgeRepoName}
	inNamespace := func(m string) string {
		return strings.Replace(m, "  name: job\n", "  name: job\n  namespace: "+ns+"\n", 1)
	}
	rev1 := push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"),
		"job.yaml":           inNamespace(fbgdManifest("flink:1.20.0", "")),
	})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.URL, gr.Spec.SecretRef, gr.Spec.TargetNamespace = forge.CloneURL(forgeRepoName), nil, ""
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
			Repository: forge.Repository(forgeRepoName), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
		gr.Spec.PullRequests = &v1alpha1.PullRequestsSpec{}
		gr.Spec.ServiceAccountName = "deployer"
	})
	f.waitApplied(rev1)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	plan := status.PlanContext(ns, "flink")
	marker := "<!-- bg-gitops plan " + ns + "/flink -->"

	// A new image: blue/green from a savepoint of job-blue.
	sha1 := g.pushBranch("new-image", true, map[string]string{"job.yaml": inNamespace(fbgdManifest("flink:1.20.1", ""))})
	n := g.open("new-image")
	f.requestPlan() // what Gitea's pull_request webhook does
	s := waitVerdict(t, f, forge, n, sha1, plan)
	assert.Equal(t, "success", s.State, s.Description)
	for _, want := range []string{"blue/green", "savepoint", "job-blue"} {
		assert.Contains(t, s.Description, want)
	}
	assert.Equal(t, []string{"pending", "success"}, planStates(t, forge, forgeRepoName, headRevision(n, sha1), plan))
	comments := g.comments(n)
	require.Len(t, comments, 1, "one plan comment")
	assert.True(t, strings.HasPrefix(comments[0].Body, marker), comments[0].Body)
	first := comments[0].ID

	// A second push: statuses on the new head, the same comment edited.
	sha2 := g.pushBranch("new-image", false, map[string]string{"job.yaml": inNamespace(fbgdManifest("flink:1.20.2", ""))})
	f.requestPlan()
	s = waitVerdict(t, f, forge, n, sha2, plan)
	assert.Equal(t, "success", s.State, s.Description)
	comments = g.comments(n)
	require.Len(t, comments, 1, "still one plan comment")
	assert.Equal(t, first, comments[0].ID)
	assert.Contains(t, comments[0].Body, "1.20.2")
	gr := f.get()
	require.Len(t, gr.Status.PullRequests, 1)
	got := gr.Status.PullRequests[0]
	assert.NotZero(t, got.CommentAuthorID, "the comment's author is kept")
	assert.Equal(t, v1alpha1.PullRequestPlan{Number: n, HeadSHA: sha2, Outcome: v1alpha1.PlanSucceeded, Summary: s.Description,
		CommentID: first, CommentAuthorID: got.CommentAuthorID, CommentSHA: sha2, StatusSHA: sha2,
		ObservedGeneration: gr.Generation, Time: got.Time}, got)

	// Closed: no longer planned, its comment stays.
	g.close(n)
	f.requestPlan()
	eventually(t, ns, "the closed pull request dropped", func() bool { return len(f.get().Status.PullRequests) == 0 })
	assert.Len(t, g.comments(n), 1)

	// A ConfigMap in another namespace: the dry-run as deployer is refused.
	sha3 := g.pushBranch("elsewhere", true, map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml, cm.yaml"),
		"cm.yaml":            fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {key: v}\n", victim),
	})
	m := g.open("elsewhere")
	f.requestPlan()
	s = waitVerdict(t, f, forge, m, sha3, plan)
	assert.Equal(t, "failure", s.State, s.Description)
	assert.Contains(t, s.Description, victim)
	assert.False(t, configMapExists(victim, "settings"), "nothing applied")
	assert.Equal(t, rev1, f.get().Status.LastAppliedRevision, "the sync applied main only")
}
