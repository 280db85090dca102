/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	gitsource "bggitops.dev/bg-gitops/internal/source"
)

func shareRepo(ns, url, branch string) *v1alpha1.GitRepository {
	return &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"},
		Spec: v1alpha1.GitRepositorySpec{URL: url, Ref: &v1alpha1.GitRepositoryRef{Branch: branch}}}
}

func testShares(t *testing.T) *shares { return newShares(shareSecret(t.TempDir()), nil) }

func member(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "ns", Name: name}
}

func drainWake(s *shares) []string {
	var got []string
	for {
		select {
		case e := <-s.wake:
			got = append(got, e.Object.GetName())
		default:
			return got
		}
	}
}

// The share key tells apart everything that decides what a fetch may
// read: the namespace, the URL, the ref and the credentials' content
// (their absence included); the Secret's name does not count.
func TestAShareKeyIsTheNamespaceURLRefAndCredentialContent(t *testing.T) {
	s := testShares(t)
	creds := map[string][]byte{"username": []byte("git"), "password": []byte("pw")}
	base := s.keyOf(shareRepo("a", "https://git.example/r.git", "main"), creds)
	assert.Equal(t, base, s.keyOf(shareRepo("a", "https://git.example/r.git", "main"),
		map[string][]byte{"password": []byte("pw"), "username": []byte("git")}), "equal content, whatever the Secret")
	for what, key := range map[string]string{
		"namespace":   s.keyOf(shareRepo("b", "https://git.example/r.git", "main"), creds),
		"URL":         s.keyOf(shareRepo("a", "https://git.example/s.git", "main"), creds),
		"ref":         s.keyOf(shareRepo("a", "https://git.example/r.git", "dev"), creds),
		"no Secret":   s.keyOf(shareRepo("a", "https://git.example/r.git", "main"), nil),
		"password":    s.keyOf(shareRepo("a", "https://git.example/r.git", "main"), map[string][]byte{"username": []byte("git"), "password": []byte("other")}),
		"field moved": s.keyOf(shareRepo("a", "https://git.example/r.git", "main"), map[string][]byte{"username": []byte("gitpw"), "password": nil}),
	} {
		assert.NotEqual(t, base, key, "a different %s shares nothing", what)
	}
	assert.True(t, strings.HasPrefix(base, "a/"))
	assert.NotContains(t, base, "pw")
	assert.NotEqual(t, base, testShares(t).keyOf(shareRepo("a", "https://git.example/r.git", "main"), creds),
		"the key is an HMAC under a secret of the cache's own")
}

// The secret of the directory names is kept in the cache root, so that a
// restarted controller finds its checkouts where it left them.
func TestAShareKeyOutlivesARestart(t *testing.T) {
	root := t.TempDir()
	gr := shareRepo("a", "https://git.example/r.git", "main")
	before := newShares(shareSecret(root), nil).keyOf(gr, nil)
	assert.Equal(t, before, newShares(shareSecret(root), nil).keyOf(gr, nil))
}

// One member holds the directory at a time; the others wait and are
// woken in turn; a member that moves to another repository, or is
// deleted last, gives the directory up to be removed.
func TestAShareIsHeldByOneMemberAndGoesWithItsLastMember(t *testing.T) {
	var removed []string
	s := newShares(shareSecret(t.TempDir()), func(ns, name string) func() {
		removed = append(removed, ns+"/"+name)
		return func() {}
	})
	a, b := member("a"), member("b")
	name, leave, ok := s.enter(a, "ns/k1")
	require.True(t, ok)
	assert.True(t, strings.HasPrefix(name, sharePrefix))
	_, _, ok = s.enter(b, "ns/k1")
	assert.False(t, ok, "a holds it")
	leave()
	leave() // twice is once
	assert.Equal(t, []string{"b"}, drainWake(s), "the waiting member is woken")
	_, leaveB, ok := s.enter(b, "ns/k1")
	require.True(t, ok)
	leaveB()

	name2, leaveA, ok := s.enter(a, "ns/k2")
	require.True(t, ok)
	assert.Empty(t, removed, "b still reads k1")
	assert.Equal(t, []string{"b"}, drainWake(s), "a moved (a rotated Secret): b is woken to poll on its own")
	s.forget(b)
	assert.Equal(t, []string{"ns/" + name}, removed, "the last member of k1 is gone: its directory goes")
	s.forget(a)
	assert.Len(t, removed, 1, "k2 is held: its directory stays until the budget evicts it")
	leaveA()
	s.forget(a)
	assert.Len(t, removed, 1, "forgotten once")
	assert.NotEqual(t, name, name2)
}

// A release wakes the member still waiting, not one that took the
// directory meanwhile on its own retry.
func TestAReleaseWakesTheMemberStillWaiting(t *testing.T) {
	s := testShares(t)
	a, b, c := member("a"), member("b"), member("c")
	_, leaveA, _ := s.enter(a, "ns/k")
	_, _, ok := s.enter(b, "ns/k")
	require.False(t, ok)
	_, _, ok = s.enter(c, "ns/k")
	require.False(t, ok)
	leaveA()
	require.Equal(t, []string{"b"}, drainWake(s))
	_, leaveC, ok := s.enter(c, "ns/k") // c's own retry comes first
	require.True(t, ok)
	_, _, ok = s.enter(b, "ns/k")
	require.False(t, ok)
	leaveC()
	assert.Equal(t, []string{"b"}, drainWake(s))
}

// Removing a directory no member reads any more holds no other
// namespace's reconcile up.
func TestRemovingASharedDirectoryHoldsNoOtherNamespaceUp(t *testing.T) {
	started, block := make(chan struct{}), make(chan struct{})
	s := newShares(shareSecret(t.TempDir()), func(string, string) func() {
		return func() { close(started); <-block }
	})
	defer close(block)
	a := types.NamespacedName{Namespace: "tenant-1", Name: "a"}
	_, leave, _ := s.enter(a, "tenant-1/k")
	leave()
	go s.forget(a)
	<-started
	done := make(chan struct{})
	go func() {
		if _, l, ok := s.enter(types.NamespacedName{Namespace: "tenant-2", Name: "x"}, "tenant-2/k"); ok {
			l()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("another tenant's reconcile waits for tenant-1's directory removal")
	}
}

// A member polls with another member's listing only when that listing
// was made since its own last poll: never with its own (a poll that comes
// early by its jitter lists), never one older than what it saw last.
func TestAMemberPollsWithAnotherMembersNewerListingOnly(t *testing.T) {
	s := testShares(t)
	a, b := member("a"), member("b")
	for _, id := range []types.NamespacedName{a, b} {
		_, leave, ok := s.enter(id, "ns/k")
		require.True(t, ok)
		leave()
	}
	t0 := time.Now()
	s.noteListing("ns/k", a, gitsource.Result{Commit: "c1"}, t0)
	_, _, ok := s.recentListing("ns/k", a, time.Hour, t0.Add(time.Minute))
	assert.False(t, ok, "a's own listing")
	res, at, ok := s.recentListing("ns/k", b, time.Hour, t0.Add(time.Minute))
	assert.True(t, ok, "a's listing, made since b last polled")
	assert.Equal(t, "c1", res.Commit)
	assert.Equal(t, t0, at, "when it was made: b's next poll counts from it")
	_, _, ok = s.recentListing("ns/k", b, time.Hour, t0.Add(2*time.Minute))
	assert.False(t, ok, "the same listing again: b polled with it already")
	s.noteListing("ns/k", a, gitsource.Result{Commit: "c2"}, t0.Add(3*time.Minute))
	_, _, ok = s.recentListing("ns/k", b, time.Minute, t0.Add(5*time.Minute))
	assert.False(t, ok, "older than b's interval")
}

// A new commit wakes the members behind it, once each: a member woken
// while its reconcile was still running (which then records its next
// poll an interval away) still runs when the wake-up comes, and a member
// that cannot follow (its build fails) is not run again by leftover
// requests.
func TestAWakeUpRunsTheWokenMemberOnce(t *testing.T) {
	r := &GitRepositoryReconciler{}
	r.Shares = newShares(shareSecret(t.TempDir()), nil)
	a, b := member("a"), member("b")
	for _, id := range []types.NamespacedName{a, b} {
		_, leave, ok := r.Shares.enter(id, "ns/k")
		require.True(t, ok)
		leave()
	}
	r.Shares.noteCommit("ns/k", b, "c1")
	assert.Equal(t, []string{"a"}, drainWake(r.Shares), "the first commit wakes the member that has not fetched it")
	r.Shares.noteCommit("ns/k", a, "c1")
	assert.Empty(t, drainWake(r.Shares), "following a known commit wakes nobody")
	assert.True(t, r.Shares.wokenSince(a))

	runA := &gitRun{gr: &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}, share: "ns/k"}
	r.fetched(runA, gitsource.Result{Commit: "c2"})
	assert.Equal(t, []string{"b"}, drainWake(r.Shares))
	now := time.Now()
	r.next.note(b, []string{"rv-b"}, ctrl.Result{RequeueAfter: time.Hour}, nil, now) // b's reconcile in flight ends
	_, early := r.next.notYet(b, "rv-b", now.Add(10*time.Millisecond))
	require.True(t, early)
	assert.True(t, r.Shares.wokenSince(b), "the wake-up runs b though its poll is an hour away")
	assert.True(t, r.Shares.wokenSince(b), "until b enters its share: a namespace slot refused on the way does not count")
	_, leave, ok := r.Shares.enter(b, "ns/k")
	require.True(t, ok)
	leave()
	assert.False(t, r.Shares.wokenSince(b), "once: a leftover request waits for the poll")
}
