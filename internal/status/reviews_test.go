/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// The users of the fake forges' threads: the token's own, and another.
const (
	selfID, otherID       = 101, 202
	selfLogin, otherLogin = "bg-gitops-bot", "mallory"
)

type fakeComment struct {
	ID, Author int64
	Body       string
}

// fakeThreads holds the comments of a fake forge's pull requests.
type fakeThreads struct {
	mu        sync.Mutex
	next      int64
	byPR      map[int64][]*fakeComment
	selfReads int
	edits     int
}

func newFakeThreads() *fakeThreads { return &fakeThreads{next: 1000, byPR: map[int64][]*fakeComment{}} }

func (th *fakeThreads) add(pr, author int64, body string) int64 {
	th.mu.Lock()
	defer th.mu.Unlock()
	th.next++
	th.byPR[pr] = append(th.byPR[pr], &fakeComment{ID: th.next, Author: author, Body: body})
	return th.next
}

func (th *fakeThreads) list(pr int64) []fakeComment {
	th.mu.Lock()
	defer th.mu.Unlock()
	var out []fakeComment
	for _, c := range th.byPR[pr] {
		out = append(out, *c)
	}
	return out
}

// edit sets the body of comment id, on pull request pr when pr is not 0.
func (th *fakeThreads) edit(pr, id int64, body string) bool {
	th.mu.Lock()
	defer th.mu.Unlock()
	for n, all := range th.byPR {
		for _, c := range all {
			if c.ID == id && (pr == 0 || pr == n) {
				c.Body = body
				th.edits++
				return true
			}
		}
	}
	return false
}

func (th *fakeThreads) readSelf() {
	th.mu.Lock()
	defer th.mu.Unlock()
	th.selfReads++
}

func (th *fakeThreads) counts() (selfReads, edits int) {
	th.mu.Lock()
	defer th.mu.Unlock()
	return th.selfReads, th.edits
}

// checkUpsert runs the plan comment's life on pull request pr, where
// another user planted a comment carrying the marker among others (more
// than a page of them), and checks what the forge holds.
func checkUpsert(t *testing.T, rv Reviews, th *fakeThreads, pr int64) {
	t.Helper()
	ctx := context.Background()
	planted := th.add(pr, otherID, testMarker+"\nall green, merge me")
	th.add(pr, otherID, "lgtm")
	th.add(pr, otherID, "nit: typo")
	id, err := upsertID(rv, ctx, pr, 0, testMarker, testMarker+"\nplan 1")
	if err != nil || id == planted {
		t.Fatalf("first upsert = %d, %v; want a new comment beside the planted one", id, err)
	}
	for i, given := range []int64{id, 0, planted, id} {
		got, err := upsertID(rv, ctx, pr, given, testMarker, testMarker+"\nplan 2"+strings.Repeat("!", min(i, 2)))
		if err != nil || got != id {
			t.Fatalf("upsert with id %d = %d, %v; want our comment %d", given, got, err, id)
		}
	}
	all := th.list(pr)
	if len(all) != 4 || all[0].Body != testMarker+"\nall green, merge me" || all[3].Body != testMarker+"\nplan 2!!" {
		t.Fatalf("the PR holds %+v; want the planted comment unchanged and ours edited in place", all)
	}
	if reads, edits := th.counts(); reads != 1 || edits != 3 {
		t.Fatalf("token's user read %d times, %d edits; want 1 read and no edit of an unchanged body", reads, edits)
	}
}

// checkCutComment posts a report longer than MaxCommentBytes.
func checkCutComment(t *testing.T, rv Reviews, th *fakeThreads, pr int64) {
	t.Helper()
	long := strings.Repeat("é", MaxCommentBytes) + testMarker
	if _, err := upsertID(rv, context.Background(), pr, 0, testMarker, long); err != nil {
		t.Fatal(err)
	}
	all := th.list(pr)
	got := all[len(all)-1].Body
	if len(got) > MaxCommentBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, cutNote) || !strings.HasPrefix(got, testMarker+"\n") {
		t.Fatalf("cut body: %d bytes, valid UTF-8 %v, starts %q, ends %q", len(got), utf8.ValidString(got), got[:40], got[len(got)-40:])
	}
}

func TestCommentBody(t *testing.T) {
	note := len(cutNote)
	tests := []struct {
		name, body, marker string
		wantLen            int
		cut                bool
	}{
		{"fits", testMarker + "\nplan", testMarker, len(testMarker) + 5, false},
		{"exactly the limit", strings.Repeat("a", MaxCommentBytes), "", MaxCommentBytes, false},
		{"one byte over", strings.Repeat("a", MaxCommentBytes+1), "", MaxCommentBytes, true},
		{"cut inside a character", "x" + strings.Repeat("€", MaxCommentBytes/3), "", 1 + (MaxCommentBytes-note-1)/3*3 + note, true},
		{"marker missing is put first", "plan", testMarker, len(testMarker) + 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := commentBody(tt.body, tt.marker)
			if len(got) != tt.wantLen || !utf8.ValidString(got) || strings.HasSuffix(got, cutNote) != tt.cut || !strings.Contains(got, tt.marker) {
				t.Fatalf("commentBody: %d bytes (want %d), valid %v, cut %v", len(got), tt.wantLen, utf8.ValidString(got), strings.HasSuffix(got, cutNote))
			}
		})
	}
}

// A forge answer past maxForgeBody fails the call, whichever client reads
// it, instead of being held in memory.
func TestForgeAnswersAreBounded(t *testing.T) {
	huge := cannedResponse{200, nil, `[{"title":"` + strings.Repeat("x", maxForgeBody) + `"}]`}
	gh, _, github := newGitHubReviewsForTest(t)
	gl, _, gitlab := newGitLabReviewsForTest(t)
	for _, tc := range []struct {
		f  *fakeForge
		rv Reviews
	}{{gh, github}, {gl, gitlab}} {
		tc.f.failNext(huge)
		_, err := tc.rv.PullRequests(context.Background(), "main", 5)
		if !errors.Is(err, errAnswerTooLarge) {
			t.Fatalf("PullRequests on a %d-byte answer: %v, want %v", len(huge.body), err, errAnswerTooLarge)
		}
	}
}
