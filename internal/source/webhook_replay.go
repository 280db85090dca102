/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// webhook_replay.go: replayMemo, the deliveries a Receiver handled, so that a
// delivery sent again causes no second reconcile request.

package source

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

// Delivery id headers: the forge's id of one delivery, the same when the
// forge redelivers it. Gitea also sends X-GitHub-Delivery; GitLab sends
// Idempotency-Key from 17.4 on, X-Gitlab-Event-UUID before.
var deliveryHeaders = []string{"X-Gitea-Delivery", "X-GitHub-Delivery", "X-Gitlab-Event-UUID", "Idempotency-Key"}

// Replay memo bounds (see replayMemo).
const (
	// DefaultReplayMemoSize is how many handled deliveries a Receiver
	// remembers when Receiver.ReplayMemoSize is 0.
	DefaultReplayMemoSize = 4096
	// DefaultReplayMemoTTL is how long a handled delivery is remembered
	// when Receiver.ReplayMemoTTL is 0.
	DefaultReplayMemoTTL = time.Hour
)

// replayMemo remembers the deliveries a Receiver handled, so that a signed
// delivery sent again (by the forge's "redeliver", or by anyone who saw it)
// is answered without a second reconcile request. A delivery is known by
// its id header and by the digest of its body: the id header is not
// covered by the signature, so a replay with a fresh id and the same
// signed body is still a replay. Only verified deliveries are remembered,
// and only once handled, so a sender without the secret cannot fill it and
// a delivery that failed on our side is handled when it comes again.
//
// It is a least-recently-used list of at most size entries (two per
// delivery, each under 200 bytes: under 2 MiB at the default size), each
// forgotten after ttl: a push whose payload happens to equal one of an
// hour ago is handled again.
type replayMemo struct {
	size int
	ttl  time.Duration

	mu      sync.Mutex
	order   *list.List // front: most recent; values are memoEntry
	entries map[string]*list.Element
}

type memoEntry struct {
	key string
	at  time.Time
}

func newReplayMemo(size int, ttl time.Duration) *replayMemo {
	if size <= 0 {
		size = DefaultReplayMemoSize
	}
	if ttl <= 0 {
		ttl = DefaultReplayMemoTTL
	}
	return &replayMemo{size: size, ttl: ttl, order: list.New(), entries: map[string]*list.Element{}}
}

// deliveryKeys are the memo keys of a delivery to path: its id (when the
// forge sent one) and its body digest.
func deliveryKeys(path string, h http.Header, body []byte) []string {
	sum := sha256.Sum256(body)
	keys := []string{path + "\x00body:" + hex.EncodeToString(sum[:])}
	for _, k := range deliveryHeaders {
		if v := h.Get(k); v != "" {
			keys = append(keys, path+"\x00id:"+truncate(v, 128))
			break
		}
	}
	return keys
}

// begin reports whether a delivery with these keys is new, and if so
// reserves them until done: a duplicate arriving while the first is
// handled counts as a replay.
func (m *replayMemo) begin(keys []string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if e, ok := m.entries[k]; ok {
			if now.Sub(e.Value.(*memoEntry).at) < m.ttl {
				return false
			}
			m.remove(e)
		}
	}
	for _, k := range keys {
		m.entries[k] = m.order.PushFront(&memoEntry{key: k, at: now})
	}
	for m.order.Len() > m.size {
		m.remove(m.order.Back())
	}
	return true
}

// forget drops a delivery whose handling failed: the forge's retry must
// go through.
func (m *replayMemo) forget(keys []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if e, ok := m.entries[k]; ok {
			m.remove(e)
		}
	}
}

func (m *replayMemo) remove(e *list.Element) {
	delete(m.entries, e.Value.(*memoEntry).key)
	m.order.Remove(e)
}

func (m *replayMemo) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}
