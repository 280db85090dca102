/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/worker"
)

// gate blocks the requests whose path contains match while closed.
type gate struct {
	next  http.RoundTripper
	match string
	mu    sync.Mutex
	open  chan struct{}
	hit   chan struct{}
	once  sync.Once
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	if open != nil && strings.Contains(r.URL.Path, g.match) {
		g.once.Do(func() { close(g.hit) })
		<-open
	}
	return g.next.RoundTrip(r)
}

func teamReq(ns, team string) ctrl.Request {
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "team-" + team}}
}

// TestAMemberWokenWhileItAppliesFollowsThePush: b's reconcile is
// applying (its checkout left) when a's requested reconcile finds a new
// commit and wakes b; b's reconcile then ends and notes its next poll an
// hour away, yet the wake-up's reconcile follows the push.
func TestAMemberWokenWhileItAppliesFollowsThePush(t *testing.T) {
	ns := newNamespace(t)
	m := newMonorepo(t)
	rev1 := m.push("v1", "a", "b")
	gitSecret(t, ns, "auth", "s3cr3t-pass")
	g := &gate{match: "/configmaps/cm-b", hit: make(chan struct{})}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { g.next = rt; return g })
	r, err := reconcile.NewDirectGitRepositoryReconciler(cfg, testenv.Scheme(), env.Client, env.Client, t.TempDir())
	require.NoError(t, err)
	wake := reconcile.EnableShares(r)
	ctx := t.Context()

	m.createTeam(ns, "a", "auth")
	_, err = r.Reconcile(ctx, teamReq(ns, "a"))
	require.NoError(t, err)
	require.Equal(t, rev1, teamRepository(t, ns, "a").Status.LastAppliedRevision)

	m.createTeam(ns, "b", "auth")
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
	done := make(chan error, 1)
	go func() { _, err := r.Reconcile(ctx, teamReq(ns, "b")); done <- err }()
	<-g.hit // b rendered rev1, left the checkout, and applies

	rev2 := m.push("v2", "a", "b")
	requestTeamReconcile(t, ns, "a") // a's push webhook
	_, err = r.Reconcile(ctx, teamReq(ns, "a"))
	require.NoError(t, err)
	require.Equal(t, rev2, teamRepository(t, ns, "a").Status.LastAppliedRevision)

	g.mu.Lock()
	close(g.open)
	g.open = nil
	g.mu.Unlock()
	require.NoError(t, <-done)
	require.Equal(t, rev1, teamRepository(t, ns, "b").Status.LastAppliedRevision)

	// The work queue runs the wake-up a's fetch sent.
	select {
	case e := <-wake:
		require.Equal(t, "team-b", e.Object.GetName())
	default:
		t.Fatal("b was not woken")
	}
	res, err := r.Reconcile(ctx, teamReq(ns, "b"))
	require.NoError(t, err)
	assert.Equal(t, rev2, teamRepository(t, ns, "b").Status.LastAppliedRevision,
		"b follows the push it was woken for (it waits %s instead)", res.RequeueAfter)
}

// TestAPushAfterASecretRotationStillReachesTheOtherMembers: after a
// rotation of the Secret two members share (its data changes, still
// valid), a's push webhook reads it afresh and moves a to a share of its
// own; b, left in the old one, is woken and follows the push.
func TestAPushAfterASecretRotationStillReachesTheOtherMembers(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	m := newMonorepo(t)
	rev1 := m.push("v1", "a", "b")
	gitSecret(t, ns, "auth", "s3cr3t-pass")
	m.createTeam(ns, "a", "auth")
	m.createTeam(ns, "b", "auth")
	waitTeamsApplied(t, ns, rev1, "a", "b")

	sec := &corev1.Secret{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "auth"}, sec))
	sec.StringData = map[string]string{"rotated-at": time.Now().Format(time.RFC3339)} // password unchanged
	require.NoError(t, env.Client.Update(context.Background(), sec))

	rev2 := m.push("v2", "a", "b")
	requestTeamReconcile(t, ns, "a")
	waitTeamsApplied(t, ns, rev2, "a")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && teamRepository(t, ns, "b").Status.LastAppliedRevision != rev2 {
		time.Sleep(200 * time.Millisecond)
	}
	assert.Equal(t, rev2, teamRepository(t, ns, "b").Status.LastAppliedRevision, "one push webhook, on any of them, reaches all")
}

// TestAPollThatComesEarlyByItsJitterStillLists: a member alone in its
// share never polls with its own listing, however early its jittered poll
// comes: every poll sees a push made before it.
func TestAPollThatComesEarlyByItsJitterStillLists(t *testing.T) {
	ns := newNamespace(t)
	m := newMonorepo(t)
	m.push("v0", "a")
	gitSecret(t, ns, "auth", "s3cr3t-pass")
	r := directReconciler(t, env.Client)
	reconcile.EnableShares(r)
	r.Worker = &worker.Pool{}
	now := time.Now()
	r.Now = func() time.Time { return now }
	m.createTeam(ns, "a", "auth")
	res, err := r.Reconcile(t.Context(), teamReq(ns, "a"))
	require.NoError(t, err)
	for i := range 12 {
		rev := m.push(fmt.Sprintf("v%d", i+1), "a")
		wait := res.RequeueAfter
		now = now.Add(wait) // the poll the controller asked for
		lists := m.srv.Listings()
		res, err = r.Reconcile(t.Context(), teamReq(ns, "a"))
		require.NoError(t, err)
		require.Equal(t, lists+1, m.srv.Listings(), "poll %d, due after %s of an interval of 1h, lists the refs", i, wait)
		require.Equal(t, rev, teamRepository(t, ns, "a").Status.LastAppliedRevision, "poll %d sees the push made before it", i)
	}
}

// sharedPair is a direct reconciler with shares and fetch workers, on a
// clock of the test's own, and members a and b of one share: a's path
// does not build when brokenA.
func sharedPair(t *testing.T, brokenA bool) (r *reconcile.GitRepositoryReconciler, m *monorepo, pool *worker.Pool, now *time.Time, ns string) {
	ns = newNamespace(t)
	m = newMonorepo(t)
	if brokenA {
		m.repo.Commit(map[string]string{"team-a/kustomization.yaml": "resources: [missing.yaml]\n"}, "broken a")
		m.push("v1", "b")
	} else {
		m.push("v1", "a", "b")
	}
	gitSecret(t, ns, "auth", "s3cr3t-pass")
	r = directReconciler(t, env.Client)
	reconcile.EnableShares(r)
	pool = &worker.Pool{}
	r.Worker = pool
	clock := time.Now()
	now = &clock
	r.Now = func() time.Time { return *now }
	m.createTeam(ns, "a", "auth")
	m.createTeam(ns, "b", "auth")
	_, err := r.Reconcile(t.Context(), teamReq(ns, "b"))
	require.NoError(t, err)
	_, _ = r.Reconcile(t.Context(), teamReq(ns, "a"))
	return r, m, pool, now, ns
}

// TestAMemberWhosePathFailsCostsTheOthersNoFetch: a member whose path
// never builds forgets what the shared checkout holds at each of its
// polls; another member polling with its listing reads the checkout and
// starts no fetch worker for an unchanged ref.
func TestAMemberWhosePathFailsCostsTheOthersNoFetch(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("a's path broken: %v", broken), func(t *testing.T) {
			r, _, pool, now, ns := sharedPair(t, broken)
			*now = now.Add(2 * time.Hour) // both polls due
			_, _ = r.Reconcile(t.Context(), teamReq(ns, "a"))
			fetches := pool.Fetches()
			*now = now.Add(time.Second)
			_, err := r.Reconcile(t.Context(), teamReq(ns, "b")) // with a's listing; nothing changed
			require.NoError(t, err)
			assert.Equal(t, fetches, pool.Fetches(), "b's poll of an unchanged ref started a fetch worker")
		})
	}
}

// TestAMemberThatCannotFollowIsNotRunAgainByLeftoverRequests: a member
// woken for a commit its fetch does not take (its worker died on it
// before) runs once for the wake-up; leftover requests then wait for its
// poll, listing nothing and starting no worker.
func TestAMemberThatCannotFollowIsNotRunAgainByLeftoverRequests(t *testing.T) {
	r, m, pool, now, ns := sharedPair(t, true)
	ctx := t.Context()
	rev2 := m.push("v2", "b")
	gr := teamRepository(t, ns, "b")
	gr.Status.LastWorkerFailure = &v1alpha1.WorkerFailure{Stage: v1alpha1.WorkerStageFetch, Revision: rev2,
		Message: "worker died", Time: metav1.NewTime(*now)}
	require.NoError(t, env.Client.Status().Update(context.Background(), gr))
	requestTeamReconcile(t, ns, "a")
	_, _ = r.Reconcile(ctx, teamReq(ns, "a")) // fetches rev2, wakes b; its build fails
	_, err := r.Reconcile(ctx, teamReq(ns, "b"))
	require.NoError(t, err)
	lists, fetches := m.srv.Listings(), pool.Fetches()
	for range 3 { // duplicate events, busyRetry requeues
		_, err = r.Reconcile(ctx, teamReq(ns, "b"))
		require.NoError(t, err)
	}
	assert.Equal(t, lists, m.srv.Listings(), "leftover requests listed the refs")
	assert.Equal(t, fetches, pool.Fetches(), "leftover requests started fetch workers")
}

// TestAPushIsSeenWithinOneIntervalOfAMemberThatPollsWithAnothersListing:
// b (interval 10m) polls with the listing a (a cron schedule) made 5
// minutes before; a push made just after that listing reaches b within
// one interval of it, not one interval after b's poll.
func TestAPushIsSeenWithinOneIntervalOfAMemberThatPollsWithAnothersListing(t *testing.T) {
	ns := newNamespace(t)
	m := newMonorepo(t)
	m.push("v1", "a", "b")
	gitSecret(t, ns, "auth", "s3cr3t-pass")
	r := directReconciler(t, env.Client)
	reconcile.EnableShares(r)
	r.Worker = &worker.Pool{}
	t0 := time.Now()
	now := t0
	r.Now = func() time.Time { return now }
	interval := 10 * time.Minute
	for team, spec := range map[string]v1alpha1.GitRepositorySpec{
		"a": {Schedule: "@every 1h"},
		"b": {Interval: &metav1.Duration{Duration: interval}},
	} {
		spec.URL, spec.Path, spec.TargetNamespace = m.srv.URL+"/mono.git", "./team-"+team, ns
		spec.SecretRef = &v1alpha1.LocalObjectReference{Name: "auth"}
		require.NoError(t, env.Client.Create(context.Background(), &v1alpha1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: "team-" + team, Namespace: ns}, Spec: spec}))
	}
	ctx := t.Context()
	resB, err := r.Reconcile(ctx, teamReq(ns, "b")) // b lists
	require.NoError(t, err)
	listedAt := t0.Add(resB.RequeueAfter - 5*time.Minute)
	now = listedAt
	_, err = r.Reconcile(ctx, teamReq(ns, "a")) // a's schedule: it lists
	require.NoError(t, err)
	rev2 := m.push("v2", "a", "b") // just after a's listing
	now = t0.Add(resB.RequeueAfter)
	resB, err = r.Reconcile(ctx, teamReq(ns, "b")) // b's poll, with a's listing
	require.NoError(t, err)
	seenBy := listedAt.Add(time.Duration(float64(interval) * (1 + 0.05)))
	next := now.Add(resB.RequeueAfter)
	assert.True(t, teamRepository(t, ns, "b").Status.LastAppliedRevision == rev2 || !next.After(seenBy),
		"a push made just after %s reaches b (interval %s) only at its poll at %s, %s after the push",
		listedAt.Format(time.TimeOnly), interval, next.Format(time.TimeOnly), next.Sub(listedAt))
}
