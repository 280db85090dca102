/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// forgeRepo is a GitRepository whose commits are also pushed to a Gitea
// repository, which receives their commit statuses.
type forgeRepo struct {
	*gitFixture
	forge *gitea.Server
	name  string
}

func newForgeRepo(t *testing.T, forge *gitea.Server, ns string) *forgeRepo {
	t.Helper()
	r := &forgeRepo{gitFixture: newGitFixture(t, ns), forge: forge, name: ns}
	_, err := forge.CreateRepo(t.Context(), r.name)
	require.NoError(t, err)
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: ns}, StringData: map[string]string{"token": forge.Token}}))
	return r
}

// push commits files to the controller's git server and to Gitea.
func (r *forgeRepo) push(files map[string]string) string {
	rev := r.gitFixture.push(files)
	r.repo.Git("push", "--quiet", r.forge.AuthCloneURL(r.name), "main:main")
	return rev
}

// pushJob commits the job's manifest (and a settings ConfigMap, so that
// two commits of one manifest differ) and waits until it is applied.
func (r *forgeRepo) pushJob(manifest, settings string) string {
	rev := r.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", settings),
		"job.yaml":           manifest,
	})
	if r.exists() {
		r.requestReconcile()
	} else {
		r.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
			gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: r.forge.URL,
				Repository: r.forge.Repository(r.name), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
		})
	}
	r.waitApplied(rev)
	return rev
}

func (r *forgeRepo) exists() bool {
	return env.Client.Get(r.t.Context(), client.ObjectKey{Namespace: r.ns, Name: "flink"}, &v1alpha1.GitRepository{}) == nil
}

// rollout returns the rollout statuses of job on rev, oldest first.
func (r *forgeRepo) rollout(rev string) []gitea.Status {
	return forgeStatuses(r.t, r.forge, r.name, rev, status.RolloutContext(r.ns, "job"))
}

func (r *forgeRepo) waitRollout(rev, state, prefix string) gitea.Status {
	return waitForgeStatus(r.t, r.ns, r.forge, r.name, rev, status.RolloutContext(r.ns, "job"), state, prefix)
}

func statesOf(list []gitea.Status) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.State)
	}
	return out
}

// TestRolloutStatusesUnderChurn, against a real Gitea
// (docs/spec/v1alpha1/flinkbluegreendeployments.md, "Commit statuses"):
// a flapping job posts at most the documented number of statuses; a
// revert of an aborted change gets its own success and leaves one child;
// a revision that went live keeps its success when the next commit's
// change was waiting behind it.
func TestRolloutStatusesUnderChurn(t *testing.T) {
	forge := startGitea(t)
	t.Run("FlappingJob", func(t *testing.T) { testFlappingJobStatuses(t, forge) })
	t.Run("RevertAfterAbort", func(t *testing.T) { testRevertAfterAbort(t, forge) })
	t.Run("DeferredSuspend", func(t *testing.T) { testDeferredSuspend(t, forge) })
}

// A new colour that keeps failing and coming back, in Manual mode (each
// return re-arms the grace period, so only a person ends it), alternates
// between two phases: at most maxPending pending statuses, then the
// verdict of the abort.
func testFlappingJobStatuses(t *testing.T, forge *gitea.Server) {
	const maxPending = 7 // docs/spec/v1alpha1/flinkbluegreendeployments.md, "Commit statuses"
	ns := newNamespace(t)
	startController(t, ns)
	r := newForgeRepo(t, forge, ns)
	r1 := r.pushJob(fbgdManifest("flink:1.20.0", ""), "v1")
	r.waitRollout(r1, "success", "job-blue active")

	flapping := fbgdManifest("flink:1.20.1", `, "bggitops.dev/simulate-flap": "700ms"`) + "  promotion: {mode: Manual}\n"
	r2 := r.pushJob(flapping, "v1")
	changes, last := 0, ""
	eventually(t, ns, "the new colour flapped between its phases long after the bound", func() bool {
		p := getFBGD(t, ns, "job")
		if c := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ReconcilingCondition); c != nil && c.Reason != last {
			changes, last = changes+1, c.Reason
		}
		return changes >= 2*maxPending+4
	})
	annotate(t, ns, "job", v1alpha1.AbortRequestedAtAnnotation)
	r.waitRollout(r2, "failure", "transition to job-green aborted")

	states := statesOf(r.rollout(r2))
	pending := 0
	for _, s := range states {
		if s == "pending" {
			pending++
		}
	}
	assert.LessOrEqual(t, pending, maxPending, "%v", states)
	assert.GreaterOrEqual(t, pending, 4, "the phases were posted: %v", states)
	assert.Equal(t, "failure", states[len(states)-1])
	assert.Len(t, states, pending+1, "the verdict is the only other status: %v", states)
}

// An aborted change is reverted by a new commit (the spec blue runs): the
// revert gets success, the colour the abort left suspended is deleted,
// and the aborted commit keeps its failure.
func testRevertAfterAbort(t *testing.T, forge *gitea.Server) {
	ns := newNamespace(t)
	startController(t, ns)
	r := newForgeRepo(t, forge, ns)
	good := fbgdManifest("flink:1.20.0", "")
	r1 := r.pushJob(good, "v1")
	r.waitRollout(r1, "success", "job-blue active")

	broken := strings.Replace(fbgdManifest("flink:1.20.1", neverReady), `abort.grace-period: "10 min"`, `abort.grace-period: "3s"`, 1)
	require.NotEqual(t, fbgdManifest("flink:1.20.1", neverReady), broken, "the grace period is shortened")
	r2 := r.pushJob(broken, "v1")
	r.waitRollout(r2, "failure", "transition to job-green aborted")
	_, leftover := child(ns, "job-green")
	require.True(t, leftover, "the abort leaves the new colour suspended")

	r3 := r.pushJob(good, "v2")
	r.waitRollout(r3, "success", "no change: job-blue already runs this spec")
	eventually(t, ns, "the leftover deleted", func() bool { _, ok := child(ns, "job-green"); return !ok })
	p := getFBGD(t, ns, "job")
	assert.Equal(t, v1alpha1.ActiveBlue, p.Status.BlueGreenState)
	assert.Equal(t, v1alpha1.JobRunning, p.Status.JobStatus.State)
	assert.Equal(t, r3, p.Status.TargetRevision, "the aborted revision is no longer the target")
	assert.Equal(t, r1, p.Status.ActiveRevision, "blue was deployed from r1")
	assert.Equal(t, "RUNNING", jobStateOf(ns, "job-blue"))
	assert.Equal(t, "failure", statesOf(r.rollout(r2))[len(r.rollout(r2))-1], "the aborted commit keeps its verdict")
	assert.Equal(t, []string{"success"}, statesOf(r.rollout(r3)))
}

// A suspend pushed while a transition runs waits for it; one decision then
// cuts over to r2 and starts the in-place suspend of r3. r2 went live: its
// success stays, and it is never called superseded.
func testDeferredSuspend(t *testing.T, forge *gitea.Server) {
	ns := newNamespace(t)
	startController(t, ns)
	r := newForgeRepo(t, forge, ns)
	r1 := r.pushJob(fbgdManifest("flink:1.20.0", ""), "v1")
	r.waitRollout(r1, "success", "job-blue active")

	slow := fbgdManifest("flink:1.20.1", `, "bggitops.dev/simulate-start-delay": "6s"`)
	r2 := r.pushJob(slow, "v1")
	eventually(t, ns, "green starting", state(t, ns, "job", v1alpha1.TransitioningToGreen, v1alpha1.JobReconciling))
	suspended := strings.Replace(slow, "parallelism: 2}", "parallelism: 2, state: suspended}", 1)
	require.NotEqual(t, slow, suspended)
	r3 := r.pushJob(suspended, "v1")
	p := getFBGD(t, ns, "job")
	require.Equal(t, v1alpha1.TransitioningToGreen, p.Status.BlueGreenState, "r3 arrived during r2's transition")
	require.Equal(t, r2, p.Status.TargetRevision)

	r.waitRollout(r3, "success", "job-green suspended as requested")
	list := r.rollout(r2)
	assert.NotContains(t, statesOf(list), "failure", "r2 went live: %+v", list)
	assert.Equal(t, "success", list[len(list)-1].State)
	assert.True(t, strings.HasPrefix(list[len(list)-1].Description, "job-green active, restored from savepoint"), list[len(list)-1].Description)
	assertNoDuplicates(t, forge, r.name, r2, status.RolloutContext(ns, "job"))
	assertNoDuplicates(t, forge, r.name, r3, status.RolloutContext(ns, "job"))
}
