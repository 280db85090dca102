/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

const otherSHA = "fedcba9876543210fedcba9876543210fedcba98"

func desiredSet() []Desired {
	return []Desired{
		{Revision: "main@sha1:" + sha40, Status: Entry{Context: SyncContext("ns", "repo"), State: StateSuccess, Description: "applied main@" + sha40[:7]}},
		{Revision: "main@sha1:" + sha40, Status: Entry{Context: RolloutContext("ns", "job"), State: StatePending, Description: "savepointing blue; " + strings.Repeat("long ", 60)}},
		{Revision: "main@sha1:" + otherSHA, Status: Entry{Context: RolloutContext("ns", "job"), State: StateFailure, Description: "superseded by " + sha40[:7]}},
	}
}

func TestSyncPostsOnceAndSkipsIdentical(t *testing.T) {
	for name, newForge := range map[string]func(*testing.T) (*fakeForge, Provider){
		"github": newGitHubForTest, "gitlab": newGitLabForTest,
	} {
		t.Run(name, func(t *testing.T) {
			f, p := newForge(t)
			ctx := context.Background()
			first, err := Sync(ctx, p, desiredSet())
			if err != nil {
				t.Fatal(err)
			}
			if f.postCount() != 3 || len(first) != 3 {
				t.Fatalf("first sync: %d posts, %d records; want 3, 3", f.postCount(), len(first))
			}
			if got := first[1].Description; got != Truncate(got, name) || !strings.HasSuffix(got, "…") {
				t.Fatalf("record should hold the truncated description, got %q", got)
			}
			again, err := Sync(ctx, p, desiredSet())
			if err != nil {
				t.Fatal(err)
			}
			if f.postCount() != 3 {
				t.Fatalf("second sync posted again: %d posts", f.postCount())
			}
			assertRecords(t, again, first)

			changed := desiredSet()
			changed[1].Status.State, changed[1].Status.Description = StateSuccess, "green active"
			if _, err := Sync(ctx, p, changed); err != nil {
				t.Fatal(err)
			}
			if f.postCount() != 4 {
				t.Fatalf("changed status: %d posts, want 4", f.postCount())
			}

			// A success is final: the same success worded anew (a
			// controller that lost its records) is not posted again.
			changed[1].Status.Description = "green active, restored from savepoint s"
			if _, err := Sync(ctx, p, changed); err != nil {
				t.Fatal(err)
			}
			if f.postCount() != 4 {
				t.Fatalf("a success reworded was posted again: %d posts, want 4", f.postCount())
			}
		})
	}
}

func TestSyncAfterLostResponseDoesNotDuplicate(t *testing.T) {
	var drop atomic.Bool
	f := newFakeForge(t, "/api/v3", "acme/app", func(f *fakeForge, w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && drop.CompareAndSwap(true, false) {
			githubAPI(f, httptest.NewRecorder(), r) // the forge stores it…
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close() // …but the answer is lost
			return
		}
		githubAPI(f, w, r)
	})
	p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: "github", Address: f.srv.URL, Repository: "acme/app"}, testToken, Options{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	want := desiredSet()[:1]
	drop.Store(true)
	_, err = Sync(context.Background(), p, want)
	var uc *UnconfirmedError
	if !errors.As(err, &uc) || !uc.Record.Unconfirmed || uc.Record.Description != want[0].Status.Description {
		t.Fatalf("want an UnconfirmedError with the record of the lost post, got %#v", err)
	}
	recs, err := Sync(context.Background(), p, want)
	if err != nil {
		t.Fatal(err)
	}
	if f.postCount() != 1 || len(recs) != 1 {
		t.Fatalf("%d posts, %d records; want 1, 1", f.postCount(), len(recs))
	}
}

func TestSyncStopsWhenRateLimitedAndKeepsAcknowledged(t *testing.T) {
	ctx := context.Background()
	// list (ok), post #1 (ok), post #2 → 429.
	calls := 0
	limited := newFakeForge(t, "/api/v3", "acme/app", func(ff *fakeForge, w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			calls++
			if calls == 2 {
				w.Header().Set("Retry-After", "12")
				writeJSON(w, http.StatusTooManyRequests, map[string]string{"message": "slow down"})
				return
			}
		}
		githubAPI(ff, w, r)
	})
	p, _ := NewProvider(v1alpha1.CommitStatusSpec{Provider: "github", Address: limited.srv.URL, Repository: "acme/app"}, testToken, Options{AllowInsecureHTTP: true})
	recs, err := Sync(ctx, p, desiredSet())
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter.Seconds() != 12 {
		t.Fatalf("want RateLimitedError{12s}, got %v", err)
	}
	if len(recs) != 1 || recs[0].Context != SyncContext("ns", "repo") {
		t.Fatalf("records = %+v, want the first one", recs)
	}
}

func TestSyncRejectsBadRevision(t *testing.T) {
	_, p := newGitHubForTest(t)
	_, err := Sync(context.Background(), p, []Desired{{Revision: "main", Status: Entry{Context: "c", State: StateSuccess}}})
	if err == nil {
		t.Fatal("want an error")
	}
}

func assertRecords(t *testing.T, got, want []v1alpha1.CommitStatusRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
