/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/devenv"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// runs counts the plays of the story in this process (go test -count=N).
var runs int

// TestStory plays the demo story, then its failure cases, on one
// environment: each step starts from the world the previous one left, so
// a failed step skips the rest. A later run in the same process starts
// over: it removes the job and pushes the seed's content again, so that its
// steps assert what the first run's do, of the commits it pushes itself.
func TestStory(t *testing.T) {
	setup(t)
	runs++
	story = env.NewStory()
	type step struct {
		name string
		run  func(t *testing.T)
	}
	steps := []step{
		{"1 first deployment", firstDeployment},
		{"2 new image rolls out blue/green from a savepoint", newImage},
		{"3 job never ready: abort keeps the old colour", neverReady},
		{"4 the fix rolls out", fix},
		{"broken kustomization: sync failure, job untouched", brokenKustomization},
		{"gitea outage during a rollout: statuses posted once when it is back", forgeOutage},
	}
	if runs > 1 {
		steps = append([]step{{"0 start over: the job removed, the seed's content pushed", startOver}}, steps...)
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.Fatalf("step %q failed; the later steps depend on it", s.name)
		}
	}
	story.PrintFigures()
	for _, r := range story.Results[1:] {
		t.Logf("step %d: push → rollout start %s, → rollout %s status %s", r.Step, r.RolloutStart, r.RolloutState, r.RolloutStatus)
	}
}

// results of the steps, for the later ones.
var seed, image, broken, fixed devenv.Result

// webhook is the last reconcile request the receiver wrote on the
// GitRepository.
var webhook string

// assertWebhookHandled proves that a push reached the controller through
// Gitea's webhook and the receiver: the receiver wrote a new reconcile
// request on the GitRepository, and the controller acknowledged it (in the
// status write of the reconcile that fetched). Polling is hourly in this
// suite (main_test.go), so nothing else fetches within a step.
func assertWebhookHandled(t *testing.T, c devenv.Commit) {
	t.Helper()
	var gr *v1alpha1.GitRepository
	ok := assert.Eventually(t, func() bool {
		gr = gitRepository(t)
		req := gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
		return req != "" && req != webhook && gr.Status.LastHandledReconcileAt == req
	}, devenv.StepTimeout, 100*time.Millisecond, "the receiver's reconcile request for %s, handled", c.Short())
	if !ok {
		t.Logf("reconcile requested at %q (before the push: %q), handled %q", gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation],
			webhook, gr.Status.LastHandledReconcileAt)
		return
	}
	webhook = gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
}

// idleRequestHandled proves that the controller has decided on the
// FlinkBlueGreenDeployment again, as it is now: it requests a promotion,
// which nothing waits for in an ACTIVE_* state, and waits for status to
// acknowledge it. The decision that acknowledges it has run its actions
// and posted its commit statuses before that status write.
func idleRequestHandled(t *testing.T) {
	t.Helper()
	token := time.Now().UTC().Format(time.RFC3339Nano)
	p := fbgd(t)
	patch := client.MergeFrom(p.DeepCopy())
	p.Annotations[v1alpha1.PromoteRequestedAtAnnotation] = token
	require.NoError(t, env.Client.Patch(t.Context(), p, patch))
	require.Eventually(t, func() bool { return fbgd(t).Status.LastHandledPromoteAt == token },
		devenv.StepTimeout, 100*time.Millisecond, "the controller acknowledges the promote request")
}

// gitReconciled is idleRequestHandled for the GitRepository: a reconcile
// request, acknowledged by the reconcile that fetched, applied and posted
// its sync status.
func gitReconciled(t *testing.T) {
	t.Helper()
	token := time.Now().UTC().Format(time.RFC3339Nano)
	gr := gitRepository(t)
	patch := client.MergeFrom(gr.DeepCopy())
	gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation] = token
	require.NoError(t, env.Client.Patch(t.Context(), gr, patch))
	require.Eventually(t, func() bool { return gitRepository(t).Status.LastHandledReconcileAt == token },
		devenv.StepTimeout, 100*time.Millisecond, "the controller acknowledges the reconcile request")
	webhook = token
}

// startOver sets the world back to before the first step, for a later run
// of the story on the same environment. The job is deleted by hand with
// its FlinkDeployments and snapshots (the garbage collector's part: the
// test control plane runs none), while the GitRepository, which polls
// hourly, leaves it deleted; then a commit sets the repository's content
// back to the seed's. The first step follows that commit: the GitRepository
// applies it on the push webhook and the job starts afresh.
func startOver(t *testing.T) {
	ctx := t.Context()
	p, err := env.FBGD(ctx)
	require.NoError(t, err)
	if p != nil {
		require.NoError(t, client.IgnoreNotFound(env.Client.Delete(ctx, p)))
	}
	gvks := []schema.GroupVersionKind{v1alpha1.FlinkDeploymentGVK, v1alpha1.FlinkStateSnapshotGVK}
	for _, gvk := range gvks {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		require.NoError(t, env.Client.DeleteAllOf(ctx, u, client.InNamespace(devenv.JobNamespace)))
	}
	require.Eventually(t, func() bool {
		if p, err := env.FBGD(ctx); err != nil || p != nil {
			return false
		}
		for _, gvk := range gvks {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gvk)
			if err := env.Client.List(ctx, l, client.InNamespace(devenv.JobNamespace)); err != nil || len(l.Items) > 0 {
				return false
			}
		}
		return true
	}, devenv.StepTimeout, 100*time.Millisecond, "the job, its FlinkDeployments and snapshots are gone")

	changes := map[string]string{}
	for f, content := range seedContent {
		if env.File(f) != content {
			changes[f] = content
		}
	}
	for _, f := range env.Files() {
		if _, ok := seedContent[f]; !ok {
			changes[f] = ""
		}
	}
	webhook = gitRepository(t).Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
	c, err := env.Push(ctx, changes, "start over: the seed's content")
	require.NoError(t, err)
	story = env.NewStoryFrom(c)
}

func firstDeployment(t *testing.T) {
	var err error
	seed, err = story.FirstDeployment(t.Context())
	require.NoError(t, err)
	rev := seed.Commit.Revision
	if seed.Commit.SHA == env.Seed.SHA {
		// Seeded before the webhook existed: applied on creation.
		webhook = gitRepository(t).Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
	} else {
		// A later run's own seed commit (startOver) came by the webhook.
		assertWebhookHandled(t, seed.Commit)
	}

	gr := gitRepository(t)
	assert.Equal(t, rev, gr.Status.LastAppliedRevision)
	assert.True(t, apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition))
	require.NotNil(t, gr.Status.Inventory)
	assert.Len(t, gr.Status.Inventory.Entries, 8,
		"Namespace, ServiceAccount, Role, RoleBinding, PersistentVolumeClaim, ConfigMap, Secret, FlinkBlueGreenDeployment")

	p := fbgd(t)
	assert.Equal(t, rev, p.Annotations[v1alpha1.RevisionAnnotation])
	assert.Equal(t, devenv.SourceNamespace+"/"+devenv.GitRepositoryName, p.Annotations[v1alpha1.SourceAnnotation])
	assert.Equal(t, "10 s", p.Spec.Configuration[v1alpha1.AbortGracePeriodKey], "the seed's demo timers patch is applied")
	assert.Equal(t, v1alpha1.ActiveBlue, p.Status.BlueGreenState)
	assert.Equal(t, v1alpha1.JobRunning, p.Status.JobStatus.State)
	assert.Equal(t, devenv.JobName+"-blue", p.Status.ActiveDeployment)
	assert.Equal(t, rev, p.Status.ActiveRevision)
	assert.Equal(t, devenv.JobName+"-blue-rest", seed.World.Ingress, "the Ingress points at the active colour")

	children := flinkDeployments(t)
	require.Equal(t, []string{devenv.JobName + "-blue"}, names(children))
	blue := children[devenv.JobName+"-blue"]
	assertChild(t, blue, "BLUE", "flink:1.20.2-java17", rev)
	assert.Empty(t, blue.InitialSavepoint, "a first deployment starts without a savepoint")
	assert.Equal(t, int64(1), nestedInt(blue.Object.Object, "spec", "job", "parallelism"), "the staging overlay's parallelism")
	job, ok := env.Sim.Lineage().Job(blue.JobID)
	require.True(t, ok)
	assert.Empty(t, job.RestoredFrom)
	assert.Zero(t, job.StartOffset)

	sts := statuses(t, seed.Commit)
	assert.Equal(t, []string{"pending", "success"}, states(sts, devenv.SyncContext), "sync: pending while applying, then success")
	assertPendingThen(t, sts, devenv.RolloutContext, "success")
	assertNoDuplicates(t, sts)
}

func newImage(t *testing.T) {
	before := seed.After
	var err error
	image, err = story.NewImage(t.Context())
	require.NoError(t, err)
	rev := image.Commit.Revision
	assertWebhookHandled(t, image.Commit)

	p := fbgd(t)
	assert.Equal(t, v1alpha1.ActiveGreen, p.Status.BlueGreenState)
	assert.Equal(t, devenv.JobName+"-green", p.Status.ActiveDeployment)
	assert.Equal(t, rev, p.Status.ActiveRevision)
	require.NotNil(t, p.Status.Savepoint)

	children := flinkDeployments(t)
	require.Equal(t, []string{devenv.JobName + "-green"}, names(children), "blue is deleted after the cut-over")
	green := children[devenv.JobName+"-green"]
	assertChild(t, green, "GREEN", "flink:1.20.3-java17", rev)
	assert.True(t, green.Running())
	assert.Equal(t, p.Status.Savepoint.Path, green.InitialSavepoint)
	assertLineage(t, green, before)
	assert.Equal(t, devenv.JobName+"-green-rest", image.World.Ingress, "the Ingress moved with the cut-over")

	snap := &unstructured.Unstructured{}
	snap.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.Get(t.Context(), types.NamespacedName{Namespace: devenv.JobNamespace, Name: p.Status.Savepoint.Name}, snap))
	assert.Equal(t, before.Name, nestedString(snap.Object, "spec", "jobReference", "name"), "the savepoint was taken of the job being replaced")
	assert.Equal(t, "COMPLETED", nestedString(snap.Object, "status", "state"))

	sts := statuses(t, image.Commit)
	assert.Equal(t, []string{"pending", "success"}, states(sts, devenv.SyncContext))
	success := assertPendingThen(t, sts, devenv.RolloutContext, "success")
	assert.Contains(t, success.Description, p.Status.Savepoint.Path, "the success status names the savepoint")
	assertNoDuplicates(t, sts)
	assert.Equal(t, seed.World.Statuses, statuses(t, seed.Commit), "nothing more is posted to the first commit")
}

func neverReady(t *testing.T) {
	before := image.After
	var err error
	broken, err = story.NeverReady(t.Context())
	require.NoError(t, err)
	assertWebhookHandled(t, broken.Commit)

	p := fbgd(t)
	assert.Equal(t, v1alpha1.ActiveGreen, p.Status.BlueGreenState, "the old colour stays active")
	assert.Equal(t, v1alpha1.JobFailing, p.Status.JobStatus.State)
	assert.Equal(t, image.Commit.Revision, p.Status.ActiveRevision)
	assert.Contains(t, p.Status.Error, "not ready within 10s")
	assert.Equal(t, devenv.JobName+"-green-rest", broken.World.Ingress, "the abort leaves the Ingress on the colour that keeps running")

	children := flinkDeployments(t)
	green, blue := children[devenv.JobName+"-green"], children[devenv.JobName+"-blue"]
	require.NotNil(t, green.Object)
	assert.Equal(t, before.JobID, green.JobID, "green was never restarted")
	assert.True(t, green.Running(), "green still RUNNING")
	assert.Equal(t, "flink:1.20.3-java17", green.Image, "green's spec is untouched")
	require.NotNil(t, blue.Object, "the aborted colour is kept, suspended")
	assert.True(t, blue.Suspended)
	assert.Equal(t, "flink:1.20.4-java17", blue.Image)
	assert.Equal(t, "true", nestedString(blue.Object.Object, "spec", "flinkConfiguration", flinksim.FaultNeverReady))

	sts := statuses(t, broken.Commit)
	assert.Equal(t, []string{"pending", "success"}, states(sts, devenv.SyncContext), "the commit applied fine")
	failure := assertPendingThen(t, sts, devenv.RolloutContext, "failure")
	assert.Equal(t, p.Status.Error, failure.Description, "the failure status gives the reason")
	assert.Contains(t, failure.Description, devenv.JobName+"-green keeps running")
	assertNoDuplicates(t, sts)

	// No retry loop: a later decision on the same spec keeps it aborted.
	idleRequestHandled(t)
	after := fbgd(t)
	assert.Equal(t, v1alpha1.ActiveGreen, after.Status.BlueGreenState)
	assert.Equal(t, v1alpha1.JobFailing, after.Status.JobStatus.State)
	assert.Equal(t, p.Status.LastReconciledTimestamp, after.Status.LastReconciledTimestamp, "the aborted spec was not taken up again")
	assert.Equal(t, p.Status.Savepoint, after.Status.Savepoint, "no new savepoint")
	assert.Equal(t, before.JobID, flinkDeployments(t)[devenv.JobName+"-green"].JobID)
	assert.Equal(t, sts, statuses(t, broken.Commit), "nothing more is posted")
}

func fix(t *testing.T) {
	before := image.After
	aborted := broken.World.Children[devenv.JobName+"-blue"]
	var err error
	fixed, err = story.Fix(t.Context())
	require.NoError(t, err)
	rev := fixed.Commit.Revision
	assertWebhookHandled(t, fixed.Commit)

	p := fbgd(t)
	assert.Equal(t, v1alpha1.ActiveBlue, p.Status.BlueGreenState)
	assert.Equal(t, v1alpha1.JobRunning, p.Status.JobStatus.State)
	assert.Empty(t, p.Status.Error)
	children := flinkDeployments(t)
	require.Equal(t, []string{devenv.JobName + "-blue"}, names(children))
	blue := children[devenv.JobName+"-blue"]
	assertChild(t, blue, "BLUE", "flink:1.20.4-java17", rev)
	assert.NotEqual(t, aborted.JobID, blue.JobID, "the aborted blue was replaced, not resumed")
	assert.Empty(t, nestedString(blue.Object.Object, "spec", "flinkConfiguration", flinksim.FaultNeverReady))
	assertLineage(t, blue, before)

	sts := statuses(t, fixed.Commit)
	assert.Equal(t, []string{"pending", "success"}, states(sts, devenv.SyncContext))
	assertPendingThen(t, sts, devenv.RolloutContext, "success")
	assertNoDuplicates(t, sts)
	assert.Equal(t, broken.World.Statuses, statuses(t, broken.Commit), "the aborted commit keeps its one failure")
}

func brokenKustomization(t *testing.T) {
	ctx := t.Context()
	running := fixed.After
	generation := fbgd(t).Generation
	kust := devenv.Overlay + "/kustomization.yaml"
	c, err := env.Edit(ctx, kust, "  - ../../base\n", "  - ../../base\n  - job-settings.yaml\n", "staging: add job-settings.yaml (forgot to git add it)")
	require.NoError(t, err)
	story.Follow(c)
	w, err := story.Wait(ctx, "sync failure on "+c.Short(), devenv.StepTimeout, func(w *devenv.World) bool {
		_, ok := w.Status(devenv.SyncContext, "failure")
		return ok
	})
	require.NoError(t, err)
	assertWebhookHandled(t, c)
	failure, _ := w.Status(devenv.SyncContext, "failure")
	assert.Contains(t, failure.Description, "job-settings.yaml", "the status says what is wrong")

	gr := gitRepository(t)
	cond := apimeta.FindStatusCondition(gr.Status.Conditions, v1alpha1.BuildFailedCondition)
	require.NotNil(t, cond)
	assert.Equal(t, metav1.ConditionTrue, cond.Status)
	assert.Equal(t, fixed.Commit.Revision, gr.Status.LastAppliedRevision, "nothing of the broken commit was applied")
	p := fbgd(t)
	assert.Equal(t, generation, p.Generation)
	assert.Equal(t, v1alpha1.ActiveBlue, p.Status.BlueGreenState)
	blue := flinkDeployments(t)[running.Name]
	assert.Equal(t, running.JobID, blue.JobID, "the job is untouched")
	assert.True(t, blue.Running())
	sts := statuses(t, c)
	assert.Empty(t, states(sts, devenv.RolloutContext), "no rollout for a commit that did not apply")
	assertNoDuplicates(t, sts)
	assert.Equal(t, fixed.World.Statuses, statuses(t, fixed.Commit), "the failure is not posted to the previous, good commit")

	// Reverting the kustomization applies again; the job is not restarted.
	c, err = env.Edit(ctx, kust, "  - job-settings.yaml\n", "", "staging: revert job-settings.yaml")
	require.NoError(t, err)
	story.Follow(c)
	_, err = story.Wait(ctx, "sync success on "+c.Short(), devenv.StepTimeout, func(w *devenv.World) bool {
		_, ok := w.Status(devenv.SyncContext, "success")
		return ok && w.Git.Status.LastAppliedRevision == c.Revision
	})
	require.NoError(t, err)
	assertWebhookHandled(t, c)
	assert.Equal(t, running.JobID, flinkDeployments(t)[running.Name].JobID)
	assert.Nil(t, apimeta.FindStatusCondition(gitRepository(t).Status.Conditions, v1alpha1.BuildFailedCondition))
}

// forgeOutage stops Gitea while a rollout runs. The rollout finishes
// regardless; the statuses Gitea missed are posted once it is back, and
// none twice.
func forgeOutage(t *testing.T) {
	ctx := t.Context()
	before := fixed.After
	patch := env.File(devenv.PatchFile)
	patch = strings.Replace(patch, "image: flink:1.20.4-java17", "image: flink:1.20.5-java17", 1)
	// A slower start leaves time to stop Gitea mid-rollout; the abort
	// grace period, which must not end this rollout, becomes long.
	patch = strings.Replace(patch, "      flinkConfiguration:\n", "      flinkConfiguration:\n        bggitops.dev/simulate-start-delay: 3s\n", 1)
	timers := env.File(devenv.TimersFile)
	require.Contains(t, timers, `abort.grace-period: "10 s"`)
	timers = strings.Replace(timers, `abort.grace-period: "10 s"`, `abort.grace-period: "10 min"`, 1)
	c, err := env.Push(ctx, map[string]string{devenv.PatchFile: patch, devenv.TimersFile: timers}, "staging: flink 1.20.5")
	require.NoError(t, err)
	story.Follow(c)
	_, err = story.Wait(ctx, "rollout of "+c.Short()+" started", devenv.StepTimeout, func(w *devenv.World) bool {
		st, _ := w.State()
		return w.FBGD.Status.TargetRevision == c.Revision && !devenv.Settled(st)
	})
	require.NoError(t, err)
	assertWebhookHandled(t, c)
	require.NoError(t, env.Gitea.StopProcess())
	env.Logf("  gitea stopped (outage)")
	stopped := true
	defer func() {
		if stopped {
			_ = env.Gitea.Serve(context.Background())
		}
	}()

	w, err := story.Wait(ctx, "ACTIVE_GREEN during the outage", devenv.StepTimeout, func(w *devenv.World) bool {
		st, job := w.State()
		return st == v1alpha1.ActiveGreen && job == v1alpha1.JobRunning && w.FBGD.Status.ActiveRevision == c.Revision &&
			apimeta.IsStatusConditionTrue(w.FBGD.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
	})
	require.NoError(t, err, "the rollout does not wait for the forge")
	cond := apimeta.FindStatusCondition(w.FBGD.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
	assert.Equal(t, "ForgeUnavailable", cond.Reason)
	assert.NotContains(t, cond.Message, env.Gitea.Token)

	require.NoError(t, env.Gitea.Serve(ctx))
	stopped = false
	env.Logf("  gitea serving again")
	w, err = story.Wait(ctx, "rollout success on "+c.Short()+" after the outage", devenv.StepTimeout, func(w *devenv.World) bool {
		_, ok := w.Status(devenv.RolloutContext, "success")
		return ok && !apimeta.IsStatusConditionTrue(fbgd(t).Status.Conditions, v1alpha1.CommitStatusFailedCondition)
	})
	require.NoError(t, err)
	// Both reporters decide again with Gitea up: a duplicate they would
	// post is posted by then.
	idleRequestHandled(t)
	gitReconciled(t)
	sts := statuses(t, c)
	assertNoDuplicates(t, sts)
	assert.Len(t, byState(sts, devenv.RolloutContext, "success"), 1, "the missing success is posted exactly once")
	assert.Empty(t, byState(sts, devenv.RolloutContext, "failure"))
	assert.Equal(t, "success", states(sts, devenv.SyncContext)[len(states(sts, devenv.SyncContext))-1])

	green := flinkDeployments(t)[devenv.JobName+"-green"]
	assertLineage(t, green, before)
	_ = w
}

// assertChild checks what every child carries: colour label, owner,
// image and revision of its commit.
func assertChild(t *testing.T, c devenv.Child, colour, image, rev string) {
	t.Helper()
	assert.Equal(t, colour, c.Colour)
	assert.Equal(t, image, c.Image)
	assert.Equal(t, rev, c.Object.GetAnnotations()[v1alpha1.RevisionAnnotation])
	refs := c.Object.GetOwnerReferences()
	if assert.Len(t, refs, 1) {
		assert.Equal(t, "FlinkBlueGreenDeployment", refs[0].Kind)
		assert.Equal(t, devenv.JobName, refs[0].Name)
		assert.Equal(t, fbgd(t).UID, refs[0].UID)
	}
	assert.Equal(t, "STABLE", c.Lifecycle)
	assert.Equal(t, "RUNNING", c.JobState)
}

// assertLineage: the new job restored from a savepoint taken from the job
// it replaced, carrying that job's offset; the old job is stopped.
func assertLineage(t *testing.T, now, replaced devenv.Child) {
	t.Helper()
	l := env.Sim.Lineage()
	require.NotEmpty(t, now.InitialSavepoint)
	sp, ok := l.Savepoint(now.InitialSavepoint)
	require.True(t, ok, "savepoint %s was taken by the simulated operator", now.InitialSavepoint)
	assert.Equal(t, replaced.JobID, sp.JobID, "the savepoint is of the job that was replaced")
	assert.Positive(t, sp.Offset)
	job, ok := l.Job(now.JobID)
	require.True(t, ok)
	assert.Equal(t, now.InitialSavepoint, job.RestoredFrom)
	assert.Equal(t, sp.Offset, job.StartOffset, "the new job carries the savepoint's offset")
	old, ok := l.Job(replaced.JobID)
	require.True(t, ok)
	assert.True(t, old.Stopped, "the replaced job is stopped")
}

// assertPendingThen: the context's statuses are one or more pending ones
// followed by exactly one final state; it returns the final one.
func assertPendingThen(t *testing.T, sts []gitea.Status, context, final string) gitea.Status {
	t.Helper()
	got := states(sts, context)
	require.NotEmpty(t, got, "no %s status", context)
	assert.Equal(t, final, got[len(got)-1], "%s: %v", context, got)
	for _, s := range got[:len(got)-1] {
		assert.Equal(t, "pending", s, "%s: %v", context, got)
	}
	assert.GreaterOrEqual(t, len(got), 2, "%s: a pending status before %s: %v", context, final, got)
	all := byState(sts, context, final)
	return all[len(all)-1]
}

func assertNoDuplicates(t *testing.T, sts []gitea.Status) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range sts {
		key := s.Context + "|" + s.State + "|" + s.Description
		assert.False(t, seen[key], "duplicate status %s %s %q", s.Context, s.State, s.Description)
		seen[key] = true
	}
}

// statuses reads the commit's statuses back from Gitea, oldest first.
func statuses(t *testing.T, c devenv.Commit) []gitea.Status {
	t.Helper()
	sts, err := env.Gitea.CommitStatuses(t.Context(), devenv.RepoName, c.SHA)
	require.NoError(t, err)
	sort.Slice(sts, func(a, b int) bool { return sts[a].ID < sts[b].ID })
	return sts
}

func states(sts []gitea.Status, context string) []string {
	var out []string
	for _, s := range sts {
		if s.Context == context {
			out = append(out, s.State)
		}
	}
	return out
}

func byState(sts []gitea.Status, context, state string) []gitea.Status {
	var out []gitea.Status
	for _, s := range sts {
		if s.Context == context && s.State == state {
			out = append(out, s)
		}
	}
	return out
}

func gitRepository(t *testing.T) *v1alpha1.GitRepository {
	t.Helper()
	gr, err := env.GitRepository(t.Context())
	require.NoError(t, err)
	return gr
}

func fbgd(t *testing.T) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p, err := env.FBGD(t.Context())
	require.NoError(t, err)
	require.NotNil(t, p, "FlinkBlueGreenDeployment %s/%s", devenv.JobNamespace, devenv.JobName)
	return p
}

func flinkDeployments(t *testing.T) map[string]devenv.Child {
	t.Helper()
	w, err := env.Observe(t.Context(), "")
	require.NoError(t, err)
	return w.Children
}

func names(m map[string]devenv.Child) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func nestedString(obj map[string]any, path ...string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func nestedInt(obj map[string]any, path ...string) int64 {
	v, _, _ := unstructured.NestedInt64(obj, path...)
	return v
}
