/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_share.go: shares, one fetch for the GitRepositories of a
// namespace that read the same repository with the same credentials.

package reconcile

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	gitsource "bggitops.dev/bg-gitops/internal/source"
)

// The GitRepositories of one namespace with the same URL, ref and
// credentials (the Secret's content, whatever its name; none counts as a
// credential of its own) share a fetch: one cache directory, so a commit
// is downloaded once for all of them, and, over HTTP(S), one ref listing
// per poll interval, so K paths of one monorepo cost what one does. A
// listing that finds a new commit wakes every other member at once: a
// push webhook to one of them wakes all, and a change one member's poll
// finds reaches the others within the same interval.
//
// Nothing is shared across namespaces, even with equal credentials: each
// namespace's fetches run in a worker process of its own, and a tenant
// must never read, or learn by timing that another tenant holds, a
// repository that only another tenant's credentials can read. The shared
// directory's name is an HMAC of the key under a key of this process, so
// neither its name nor a directory listing says anything about the
// credentials.
//
// One member at a time holds the directory, from its fetch to the end of
// its render (the apply reads no file of it); another member's reconcile
// meanwhile is requeued without a status write and woken when it is free.

// sharePrefix names shared cache directories: no object name starts
// with it ("_" is not in a DNS subdomain name).
const sharePrefix = "_shared-"

// shareKeyFile, in the cache's root, keeps the key of the directory
// names across restarts, so that a restarted controller finds its
// checkouts where it left them.
const shareKeyFile = ".share-key"

// shares holds the shared fetches of one controller.
type shares struct {
	secret []byte
	// discard forgets a directory no member reads any more (Cache.Discard)
	// and returns its removal, run after mu is released.
	discard func(namespace, name string) (remove func())
	mu      sync.Mutex
	byKey   map[string]*share
	of      map[types.NamespacedName]string
	wake    chan event.GenericEvent
	// woken are the objects woken that have not entered their share
	// since: a reconcile of one runs, though its next poll is not due
	// (see wokenSince).
	woken map[types.NamespacedName]bool
}

// share is the fetch of one key.
type share struct {
	name    string // the cache directory's, under the namespace
	users   map[types.NamespacedName]bool
	held    bool
	waiting []types.NamespacedName
	// listed is the last HTTP(S) listing of the repository, by whom and
	// when it was made; polled is when each member last polled, seen the
	// commit it last found its ref at; commit is the newest one found.
	listed   *gitsource.Result
	listedBy types.NamespacedName
	listedAt time.Time
	polled   map[types.NamespacedName]time.Time
	seen     map[types.NamespacedName]string
	commit   string
}

// newShares returns the shares of a controller whose directory names
// are keyed by secret.
func newShares(secret []byte, discard func(namespace, name string) func()) *shares {
	return &shares{secret: secret, discard: discard, byKey: map[string]*share{}, of: map[types.NamespacedName]string{},
		woken: map[types.NamespacedName]bool{}, wake: make(chan event.GenericEvent, wakeBuffer)}
}

// shareSecret is the key kept in the cache's root, made on first use; a
// fresh one of this process only when it cannot be read or written (or
// without a root).
func shareSecret(root string) []byte {
	path := filepath.Join(root, shareKeyFile)
	if b, err := os.ReadFile(path); root != "" && err == nil && len(b) == 32 {
		return b
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	if root == "" {
		return b
	}
	tmp := path + ".new"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, path) // whole or not at all
	}
	return b
}

// source is the controller's watch of the wake-ups.
func (s *shares) source() source.Source {
	return source.Channel(s.wake, &handler.EnqueueRequestForObject{})
}

// keyOf is the share key of gr fetched with the Secret data sec (nil
// without a secretRef): its namespace and an HMAC of the URL, the ref and
// the credentials.
func (s *shares) keyOf(gr *v1alpha1.GitRepository, sec map[string][]byte) string {
	mac := hmac.New(sha256.New, s.secret)
	ref, _ := json.Marshal(gr.GetRef())
	for _, part := range [][]byte{[]byte(gr.Spec.URL), ref} {
		writeField(mac, part)
	}
	if sec == nil {
		writeField(mac, []byte("no credentials"))
	}
	keys := make([]string, 0, len(sec))
	for k := range sec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		writeField(mac, []byte(k))
		writeField(mac, sec[k])
	}
	return gr.Namespace + "/" + hex.EncodeToString(mac.Sum(nil))[:32]
}

// writeField writes b length-prefixed, so that no two field lists hash
// alike.
func writeField(h hash.Hash, b []byte) {
	_, _ = h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
	_, _ = h.Write(b)
}

// enter makes id a member of the share of key, leaving the one it was in
// (whose directory goes when it has no member left; the members it has
// left are woken: id may have moved with a rotated Secret, and the commit
// it finds next wakes only its new share), and takes the share's
// directory. ok is false when another member holds it: id is woken when
// it is free.
func (s *shares) enter(id types.NamespacedName, key string) (name string, leave func(), ok bool) {
	var after []func()
	defer func() {
		for _, f := range after {
			f()
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, in := s.of[id]; in && old != key {
		after = append(after, s.drop(id, old, true))
	}
	sh := s.byKey[key]
	if sh == nil {
		sh = &share{name: sharePrefix + key[strings.LastIndexByte(key, '/')+1:], users: map[types.NamespacedName]bool{},
			polled: map[types.NamespacedName]time.Time{}, seen: map[types.NamespacedName]string{}}
		s.byKey[key] = sh
	}
	sh.users[id], s.of[id] = true, key
	if sh.held {
		if !slices.Contains(sh.waiting, id) {
			sh.waiting = append(sh.waiting, id)
		}
		return "", nil, false
	}
	sh.held = true
	sh.waiting = slices.DeleteFunc(sh.waiting, func(w types.NamespacedName) bool { return w == id })
	delete(s.woken, id) // the reconcile it was woken for runs
	var once sync.Once
	return sh.name, func() { once.Do(func() { s.release(sh) }) }, true
}

// release frees sh's directory and wakes the member that waited longest.
func (s *shares) release(sh *share) {
	s.mu.Lock()
	sh.held = false
	var next []types.NamespacedName
	if len(sh.waiting) > 0 {
		next, sh.waiting = sh.waiting[:1], sh.waiting[1:]
	}
	s.mu.Unlock()
	s.send(next)
}

// forget removes id (deleted) from its share.
func (s *shares) forget(id types.NamespacedName) {
	if s == nil {
		return
	}
	s.mu.Lock()
	key, in := s.of[id]
	var after func()
	if in {
		after = s.drop(id, key, false)
	}
	s.mu.Unlock()
	if after != nil {
		after()
	}
}

// drop removes id from the share of key; s.mu is held. It returns what
// is left to do once s.mu is released: wake the members left (when
// wakeOthers), or remove the directory of a share left without members
// (unless a reconcile still holds it: the budget evicts that one in
// time).
func (s *shares) drop(id types.NamespacedName, key string, wakeOthers bool) func() {
	delete(s.of, id)
	sh := s.byKey[key]
	if sh == nil {
		return func() {}
	}
	delete(sh.users, id)
	delete(sh.polled, id)
	delete(sh.seen, id)
	sh.waiting = slices.DeleteFunc(sh.waiting, func(w types.NamespacedName) bool { return w == id })
	if len(sh.users) > 0 {
		if !wakeOthers {
			return func() {}
		}
		others := slices.Collect(maps.Keys(sh.users))
		return func() { s.send(others) }
	}
	delete(s.byKey, key)
	if sh.held || s.discard == nil {
		return func() {}
	}
	return s.discard(id.Namespace, sh.name)
}

// recentListing is the share's last HTTP(S) listing for id to poll with,
// and when it was made: one another member made since id last polled,
// within maxAge.
func (s *shares) recentListing(key string, id types.NamespacedName, maxAge time.Duration, now time.Time) (gitsource.Result, time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.byKey[key]
	if sh == nil || sh.listed == nil || sh.listedBy == id || maxAge <= 0 ||
		now.Sub(sh.listedAt) >= maxAge || !sh.listedAt.After(sh.polled[id]) {
		return gitsource.Result{}, time.Time{}, false
	}
	sh.polled[id] = now
	return *sh.listed, sh.listedAt, true
}

// noteListing records a listing id made at at.
func (s *shares) noteListing(key string, id types.NamespacedName, res gitsource.Result, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh := s.byKey[key]; sh != nil {
		sh.listed, sh.listedBy, sh.listedAt = &res, id, at
		sh.polled[id] = at
	}
}

// noteCommit records the commit id found its ref at, and, when it is a
// new one, wakes the members that have not followed it.
func (s *shares) noteCommit(key string, id types.NamespacedName, commit string) {
	s.mu.Lock()
	sh := s.byKey[key]
	if sh == nil || commit == "" {
		s.mu.Unlock()
		return
	}
	sh.seen[id] = commit
	var behind []types.NamespacedName
	if sh.commit != commit {
		sh.commit = commit
		for u := range sh.users {
			if sh.seen[u] != commit {
				behind = append(behind, u)
			}
		}
	}
	s.mu.Unlock()
	s.send(behind)
}

// wokenSince reports an object woken that has not entered its share
// since: its reconcile is not a leftover request, though its next poll
// is not due (a reconcile of it that was running when it was woken has
// recorded that poll since), nor does a namespace slot refused on the way
// count as the run it was woken for.
func (s *shares) wokenSince(id types.NamespacedName) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.woken[id]
}

// send wakes ids; a full channel drops a wake-up (the object's poll, or
// busyRetry, comes anyway).
func (s *shares) send(ids []types.NamespacedName) {
	for _, id := range ids {
		s.mu.Lock()
		s.woken[id] = true
		s.mu.Unlock()
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name}}
		select {
		case s.wake <- event.GenericEvent{Object: client.Object(obj)}:
		default:
		}
	}
}

// enterCache takes run's cache directory: its share's, or its own when
// the controller shares nothing or its credentials cannot be read (the
// fetch then says why). false: another member of its share holds the
// directory, and run's object is woken when it is free.
func (r *GitRepositoryReconciler) enterCache(ctx context.Context, run *gitRun) bool {
	gr := run.gr
	run.cacheName = gr.Name
	leaveShare := func() {}
	if r.Shares != nil {
		run.auth, run.sec, run.authErr = r.auth(ctx, run)
		run.authRead = true
		if run.authErr != nil {
			r.Shares.forget(client.ObjectKeyFromObject(gr)) // its fetch fails, alone
		} else {
			var data map[string][]byte
			if run.sec != nil {
				data = run.sec.Data
			}
			run.share = r.Shares.keyOf(gr, data)
			name, leave, ok := r.Shares.enter(client.ObjectKeyFromObject(gr), run.share)
			if !ok {
				return false
			}
			run.cacheName, leaveShare = name, leave
		}
	}
	dir, release := r.Cache.Acquire(gr.Namespace, run.cacheName)
	run.dir = dir
	var once sync.Once
	run.leave = func() {
		once.Do(func() {
			if evicted := release(); len(evicted) > 0 {
				logf.FromContext(ctx).V(1).Info("git cache over budget: checkouts removed, fetched afresh when next needed", "evicted", evicted)
			}
			leaveShare()
		})
	}
	return true
}

// poll lists the refs of an HTTP(S) repository, or takes the listing
// another member of run's share made since this object last polled and
// within its interval (less the jitter, so that a poll that comes early
// lists); the next poll is then due an interval after that listing, so a
// change is seen within one interval, as without a share. A requested
// reconcile and a cron schedule always list. has reports a directory
// that holds the listed commit checked out already.
func (r *GitRepositoryReconciler) poll(ctx context.Context, run *gitRun, o gitsource.Options) (res gitsource.Result, unchanged, has bool, err error) {
	if r.Shares == nil || run.share == "" {
		res, unchanged, err = gitsource.Poll(ctx, o)
		return res, unchanged, err == nil && (unchanged || gitsource.Holds(o, res.Commit)), err
	}
	id := client.ObjectKeyFromObject(run.gr)
	maxAge := time.Duration(float64(run.gr.GetInterval()) * (1 - gitsource.Jitter))
	if run.requested() || run.gr.Spec.Schedule != "" {
		maxAge = 0
	}
	now := r.now()
	if l, at, ok := r.Shares.recentListing(run.share, id, maxAge, now); ok {
		l.Dir = o.Dir
		run.result.RequeueAfter = max(run.result.RequeueAfter-now.Sub(at), time.Second)
		has = gitsource.Holds(o, l.Commit)
		return l, has && l.Revision == o.LastRevision, has, nil
	}
	res, unchanged, err = gitsource.Poll(ctx, o)
	if err != nil {
		return res, false, false, err
	}
	r.Shares.noteListing(run.share, id, res, now)
	return res, unchanged, unchanged || gitsource.Holds(o, res.Commit), nil
}

// fetched records the commit run found its ref at in its share; a new
// one wakes the members that have not followed it: they follow now
// rather than at their next poll.
func (r *GitRepositoryReconciler) fetched(run *gitRun, res gitsource.Result) {
	if r.Shares != nil && run.share != "" {
		r.Shares.noteCommit(run.share, client.ObjectKeyFromObject(run.gr), res.Commit)
	}
}
