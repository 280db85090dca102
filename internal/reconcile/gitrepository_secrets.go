/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_secrets.go: secretMemo, the Secrets a GitRepository reconcile
// or the webhook receiver read, kept for secretTTL.

package reconcile

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/source"
)

// secretTTL is how long a GitRepository reconcile uses a Secret it read
// (the git credentials, the webhook token) before reading it again.
// Secrets are not cached by a watch (the controller may only get them),
// so without it every poll would read them: a request per Secret per
// reconcile. A requested reconcile and a failed fetch read them afresh.
const secretTTL = 5 * time.Minute

// secretMemo remembers Secrets read by GitRepository reconciles.
type secretMemo struct {
	mu sync.Mutex
	m  map[types.NamespacedName]memoEntry
}

type memoEntry struct {
	sec *corev1.Secret
	at  time.Time
}

// get returns the Secret key read less than secretTTL before now.
func (s *secretMemo) get(key types.NamespacedName, now time.Time) (*corev1.Secret, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok || now.Sub(e.at) >= secretTTL {
		return nil, false
	}
	return e.sec.DeepCopy(), true
}

// put remembers sec, read at now, and drops expired entries.
func (s *secretMemo) put(key types.NamespacedName, sec *corev1.Secret, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.NamespacedName]memoEntry{}
	}
	for k, e := range s.m {
		if now.Sub(e.at) >= secretTTL {
			delete(s.m, k)
		}
	}
	s.m[key] = memoEntry{sec: sec.DeepCopy(), at: now}
}

// drop forgets key: its value did not work.
func (s *secretMemo) drop(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// read returns the Secret key: from the memo unless fresh, else read
// with c and remembered.
func (s *secretMemo) read(ctx context.Context, c client.Reader, key types.NamespacedName, fresh bool, now time.Time) (*corev1.Secret, error) {
	if !fresh {
		if sec, ok := s.get(key, now); ok {
			return sec, nil
		}
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, key, sec); err != nil {
		return nil, err
	}
	s.put(key, sec, now)
	return sec, nil
}

// readSecret reads the Secret key for run: from the memo, unless the
// reconcile was requested (`bg-gitops reconcile`, a webhook), which reads
// it afresh.
func (r *GitRepositoryReconciler) readSecret(ctx context.Context, run *gitRun, key types.NamespacedName) (*corev1.Secret, error) {
	return r.secrets.read(ctx, r.Client, key, run.requested(), r.now())
}

// memoSecrets reads Secrets with c through memo, for the webhook
// receiver: shared with the GitRepository reconciler, a webhook Secret is
// read from the API server once per secretTTL, not once per delivery, and
// a reconcile that reads a rotated Secret (and publishes the new webhook
// path) updates what the receiver uses.
func memoSecrets(c client.Reader, memo *secretMemo) source.SecretReader {
	return func(ctx context.Context, key client.ObjectKey, fresh bool) (*corev1.Secret, error) {
		return memo.read(ctx, c, key, fresh, time.Now())
	}
}

// secretKey names a Secret of gr's namespace.
func secretKey(gr client.Object, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: gr.GetNamespace(), Name: name}
}
