/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// startGitea runs a real Gitea for one test; it skips only as the suite's
// skip policy allows (a missing binary outside CI).
func startGitea(t *testing.T) *gitea.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := gitea.Start(ctx, gitea.Options{})
	if gitea.Skippable(err) {
		t.Skip("real Gitea: ", err)
	}
	require.NoError(t, err, "start gitea")
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// forgeRepoName is the repository withForge creates on Gitea.
const forgeRepoName = "flink"

// withForge starts a real Gitea with a repository forgeRepoName and the
// Secret forge-token of its token in ns; push commits files under deploy/
// of f, pushes them to f's git server and to Gitea, and returns the
// revision.
func withForge(t *testing.T, f *gitFixture, ns string) (*gitea.Server, func(map[string]string) string) {
	t.Helper()
	forge := startGitea(t)
	_, err := forge.CreateRepo(t.Context(), forgeRepoName)
	require.NoError(t, err)
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: ns}, StringData: map[string]string{"token": forge.Token}}))
	return forge, func(files map[string]string) string {
		rev := f.push(files)
		f.repo.Git("push", "--quiet", forge.AuthCloneURL(forgeRepoName), "main:main")
		return rev
	}
}

// forgeStatuses reads the commit statuses of one context on rev back from
// Gitea, oldest first.
func forgeStatuses(t *testing.T, forge *gitea.Server, repo, rev, context string) []gitea.Status {
	t.Helper()
	_, sha, err := v1alpha1.ParseRevision(rev)
	require.NoError(t, err)
	all, err := forge.CommitStatuses(t.Context(), repo, sha)
	require.NoError(t, err)
	var out []gitea.Status
	for _, s := range all {
		if s.Context == context {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// waitForgeStatus waits until the newest status of context on rev has
// state and a description with prefix.
func waitForgeStatus(t *testing.T, ns string, forge *gitea.Server, repo, rev, context, state, prefix string) gitea.Status {
	t.Helper()
	var last gitea.Status
	eventually(t, ns, fmt.Sprintf("%s %s %q on %s", context, state, prefix, rev), func() bool {
		list := forgeStatuses(t, forge, repo, rev, context)
		if len(list) == 0 {
			return false
		}
		last = list[len(list)-1]
		return last.State == state && strings.HasPrefix(last.Description, prefix)
	})
	return last
}

// assertNoDuplicates: no (state, description) was posted twice in one
// context of rev.
func assertNoDuplicates(t *testing.T, forge *gitea.Server, repo, rev string, contexts ...string) {
	t.Helper()
	for _, c := range contexts {
		seen := map[string]int{}
		for _, s := range forgeStatuses(t, forge, repo, rev, c) {
			seen[s.State+" "+s.Description]++
		}
		for k, n := range seen {
			assert.Equalf(t, 1, n, "%s on %s: %q posted %d times", c, rev, k, n)
		}
	}
}

func commitStatusFailed(conds []metav1.Condition) bool {
	return apimeta.IsStatusConditionTrue(conds, v1alpha1.CommitStatusFailedCondition)
}

// TestCommitStatusesWhileWaitingAndAfterARestart, against a real Gitea:
// the rollout status is pending, with the reason, while the transition
// waits for a rollout window and then for a manual promotion; the statuses
// the forge could not take during an outage (the rollout's success, the
// sync of a new commit) are posted by a new controller instance, fresh
// memory, started after the outage; a further instance that finds the
// acknowledgements gone from status posts nothing again; nothing is ever
// posted twice.
func TestCommitStatusesWhileWaitingAndAfterARestart(t *testing.T) {
	ns := newNamespace(t)
	stopA := startController(t, ns)
	f := newGitFixture(t, ns)
	forge := startGitea(t)
	const repoName = "flink"
	_, err := forge.CreateRepo(t.Context(), repoName)
	require.NoError(t, err)
	// The controller fetches from the git server of the fixture, which
	// stays up during the forge's outage; the same commits are pushed to
	// Gitea, which holds their statuses.
	toForge := func() { f.repo.Git("push", "--quiet", forge.AuthCloneURL(repoName), "main:main") }
	push := func(files map[string]string) string {
		rev := f.push(files)
		toForge()
		return rev
	}
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: ns}, StringData: map[string]string{"token": forge.Token}}))
	sync, rollout := status.SyncContext(ns, "flink"), status.RolloutContext(ns, "job")

	rev1 := push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
		"job.yaml":           manualManifest("flink:1.20.0", "0"),
	})
	closed := []v1alpha1.RolloutWindow{{Schedule: "0 3 29 2 *", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Europe/Berlin"}}
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
			Repository: forge.Repository(repoName), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
		gr.Spec.RolloutWindows = closed
	})
	f.waitApplied(rev1)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	waitForgeStatus(t, ns, forge, repoName, rev1, sync, "success", "applied to the cluster")
	waitForgeStatus(t, ns, forge, repoName, rev1, rollout, "success", "job-blue active")

	// A new image waits for the rollout window: pending, saying so.
	rev2 := push(map[string]string{"job.yaml": manualManifest("flink:1.20.1", "0")})
	f.requestReconcile()
	f.waitApplied(rev2)
	s := waitForgeStatus(t, ns, forge, repoName, rev2, rollout, "pending", "waiting for rollout window")
	assert.Contains(t, s.Description, "Europe/Berlin")
	_, green := child(ns, "job-green")
	assert.False(t, green, "no transition outside the window")

	// The window opens; the new colour runs and waits for a promotion:
	// pending, saying how to promote.
	gr := f.get()
	patch := client.MergeFrom(gr.DeepCopy())
	gr.Spec.RolloutWindows = []v1alpha1.RolloutWindow{{Schedule: "* * * * *", Duration: metav1.Duration{Duration: time.Minute}}}
	require.NoError(t, env.Client.Patch(t.Context(), gr, patch))
	s = waitForgeStatus(t, ns, forge, repoName, rev2, rollout, "pending", "waiting for promotion")
	assert.Contains(t, s.Description, "promote")
	p := getFBGD(t, ns, "job")
	assert.Equal(t, v1alpha1.TransitioningToGreen, p.Status.BlueGreenState)
	assert.Equal(t, "RUNNING", jobStateOf(ns, "job-blue"), "the old colour keeps running")

	// Forge outage: the promotion completes and a new commit is applied,
	// but neither the rollout's success nor the new commit's sync reaches
	// Gitea. (The commit is on Gitea already: it is pushed to the
	// controller's git server during the outage.)
	rev3Files := map[string]string{"deploy/settings.yaml": fmt.Sprintf(configMap, "settings", "v2")}
	rev3 := "main@sha1:" + f.repo.Commit(rev3Files, "settings v2")
	toForge()
	require.NoError(t, forge.StopProcess())
	annotate(t, ns, "job", v1alpha1.PromoteRequestedAtAnnotation)
	eventually(t, ns, "ACTIVE_GREEN, its status not posted", func() bool {
		p := getFBGD(t, ns, "job")
		return p.Status.BlueGreenState == v1alpha1.ActiveGreen && p.Status.JobStatus.State == v1alpha1.JobRunning &&
			commitStatusFailed(p.Status.Conditions)
	})
	f.repo.Push("main")
	f.requestReconcile()
	f.waitApplied(rev3)
	eventually(t, ns, "sync status of "+rev3+" not posted", func() bool { return commitStatusFailed(f.get().Status.Conditions) })

	// The controller is replaced while the forge is down; the new instance
	// starts after the outage with nothing in memory.
	stopA()
	require.NoError(t, forge.Serve(t.Context()))
	stopB := startController(t, ns)
	waitForgeStatus(t, ns, forge, repoName, rev2, rollout, "success", "job-green active, restored from savepoint")
	waitForgeStatus(t, ns, forge, repoName, rev3, sync, "success", "applied to the cluster (2 objects)")
	eventually(t, ns, "the new instance recorded what the forge acknowledged", func() bool {
		return !commitStatusFailed(getFBGD(t, ns, "job").Status.Conditions) && !commitStatusFailed(f.get().Status.Conditions)
	})

	assertNoDuplicates(t, forge, repoName, rev1, sync, rollout)
	assertNoDuplicates(t, forge, repoName, rev2, sync, rollout)
	assertNoDuplicates(t, forge, repoName, rev3, sync, rollout)
	states := func(rev, c string) []string {
		var out []string
		for _, s := range forgeStatuses(t, forge, repoName, rev, c) {
			out = append(out, s.State)
		}
		return out
	}
	assert.NotContains(t, states(rev2, rollout)[:len(states(rev2, rollout))-1], "success", "rev2's rollout succeeded once, at the end")
	assert.Equal(t, []string{"success"}, states(rev3, rollout), "rev3 changed no job: the job already runs its spec")
	assert.Equal(t, "no change: job-green already runs this spec", forgeStatuses(t, forge, repoName, rev3, rollout)[0].Description)
	// What is posted is derived from status: once the forge is back, rev3
	// is applied, so its pending status is never posted, only its success.
	assert.Equal(t, []string{"success"}, states(rev3, sync))

	// Another restart, this time with the acknowledgements lost (a status
	// write that never happened): the new instance finds the statuses on
	// the forge and records them without posting again.
	total := func() int {
		n := 0
		for _, r := range []string{rev1, rev2, rev3} {
			n += len(forgeStatuses(t, forge, repoName, r, sync)) + len(forgeStatuses(t, forge, repoName, r, rollout))
		}
		return n
	}
	before := total()
	stopB()
	p = getFBGD(t, ns, "job")
	pp := client.MergeFrom(p.DeepCopy())
	p.Status.CommitStatuses = nil
	require.NoError(t, env.Client.Status().Patch(t.Context(), p, pp))
	gr = f.get()
	gp := client.MergeFrom(gr.DeepCopy())
	gr.Status.CommitStatuses = nil
	require.NoError(t, env.Client.Status().Patch(t.Context(), gr, gp))
	require.Empty(t, getFBGD(t, ns, "job").Status.CommitStatuses)
	require.Empty(t, f.get().Status.CommitStatuses)
	startController(t, ns)
	eventually(t, ns, "acknowledgements recorded again", func() bool {
		return hasRecord(getFBGD(t, ns, "job").Status.CommitStatuses, rollout, rev2, "success") &&
			hasRecord(f.get().Status.CommitStatuses, sync, rev3, "success")
	})
	assert.Equal(t, before, total(), "nothing was posted again")
	assertNoDuplicates(t, forge, repoName, rev2, sync, rollout)
	assertNoDuplicates(t, forge, repoName, rev3, sync, rollout)
}

func hasRecord(records []v1alpha1.CommitStatusRecord, context, rev, state string) bool {
	for _, r := range records {
		if r.Context == context && r.Revision == rev && r.State == state {
			return true
		}
	}
	return false
}

// TestAPendingStatusOfAControllerThatStoppedRightAfterPostingGetsAVerdict,
// against a real Gitea: the controller posts the sync status "pending" of
// a new commit and stops before anything else reaches the API server; a
// newer commit is pushed before another instance runs. The forge's pending
// status on the first commit is not left for ever: the next instance says
// it was superseded.
func TestAPendingStatusOfAControllerThatStoppedRightAfterPostingGetsAVerdict(t *testing.T) {
	ns := newNamespace(t)
	f := newGitFixture(t, ns)
	forge, push := withForge(t, f, ns)
	const repoName = forgeRepoName
	sync := status.SyncContext(ns, "flink")

	// The first instance reaches Gitea through a proxy; once Gitea took a
	// pending status of a commit other than the first, the instance is cut
	// off from the API server, as if it had been killed there.
	var crashed atomic.Bool
	var crashOn atomic.Value
	crashOn.Store("")
	target, err := url.Parse(forge.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sha := crashOn.Load().(string)
		if r.Method != http.MethodPost || sha == "" || !strings.HasSuffix(r.URL.Path, "/statuses/"+sha) || !bytes.Contains(body, []byte(`"pending"`)) {
			proxy.ServeHTTP(w, r)
			return
		}
		// Gitea has the status before the controller hears back.
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		crashed.Store(true)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	defer front.Close()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if crashed.Load() {
				return nil, errors.New("the controller was stopped")
			}
			return next.RoundTrip(r)
		})
	})
	stopA := startControllerWith(t, ns, cfg)

	rev1 := push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
	})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: front.URL,
			Repository: forge.Repository(repoName), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
	})
	f.waitApplied(rev1)
	waitForgeStatus(t, ns, forge, repoName, rev1, sync, "success", "applied to the cluster")

	rev2 := "main@sha1:" + f.repo.Commit(map[string]string{"deploy/settings.yaml": fmt.Sprintf(configMap, "settings", "v2")}, "settings v2")
	_, sha2, err := v1alpha1.ParseRevision(rev2)
	require.NoError(t, err)
	crashOn.Store(sha2)
	f.repo.Push("main")
	f.repo.Git("push", "--quiet", forge.AuthCloneURL(repoName), "main:main")
	f.requestReconcile()
	waitForgeStatus(t, ns, forge, repoName, rev2, sync, "pending", "applying to the cluster")
	eventually(t, ns, "the first instance cut off", crashed.Load)
	stopA()

	rev3 := push(map[string]string{"settings.yaml": fmt.Sprintf(configMap, "settings", "v3")})
	startController(t, ns)
	f.requestReconcile()
	f.waitApplied(rev3)
	waitForgeStatus(t, ns, forge, repoName, rev3, sync, "success", "applied to the cluster")
	waitForgeStatus(t, ns, forge, repoName, rev2, sync, "failure", "not applied: superseded by "+v1alpha1.ShortSHA(strings.TrimPrefix(rev3, "main@sha1:")))
	assertNoDuplicates(t, forge, repoName, rev2, sync)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
