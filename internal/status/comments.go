/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// comments.go: upsertComment, the rule every forge shares for editing the
// plan comment in place (only ever one written by the token's own user),
// and commentBody, a report cut to MaxCommentBytes.

package status

import (
	"context"
	"errors"
	"strings"
	"sync"
	"unicode/utf8"
)

// cutNote ends a report cut to MaxCommentBytes.
const cutNote = "\n\n… (cut: the report is longer than the forge comment limit)"

// maxCommentPages bounds the pages of comments read to find the plan
// comment on a pull request.
const maxCommentPages = 10

// maxPullRequests bounds a listing: one page on every forge.
const maxPullRequests = 100

// listLimit is limit within 1..maxPullRequests.
func listLimit(limit int) int { return min(max(limit, 1), maxPullRequests) }

// comment is a pull request's comment as upsertComment needs it.
type comment struct {
	id, author int64
	body       string
}

// commentAPI is one forge's comment endpoints.
type commentAPI interface {
	// self is the id of the token's own user (uncached).
	self(ctx context.Context) (int64, error)
	comments(ctx context.Context, number int64) ([]comment, error)
	editComment(ctx context.Context, number, id int64, body string) error
	createComment(ctx context.Context, number int64, body string) (CommentRef, error)
}

// selfCache holds the token's user id once read: it does not change for
// the life of a Reviews (a new token makes a new Reviews).
type selfCache struct {
	mu sync.Mutex
	id int64
}

func (c *selfCache) get(ctx context.Context, api commentAPI) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id != 0 {
		return c.id, nil
	}
	id, err := api.self(ctx)
	if err == nil && id == 0 {
		err = errors.New("the forge names no user for the token")
	}
	if err == nil {
		c.id = id
	}
	return id, err
}

// upsertComment edits comment prev.ID, else the comment carrying marker,
// else creates one; it edits only a comment whose author is the token's
// own user, since anyone who can comment can paste the marker. A token
// the forge refuses its own user (GitHub App installation tokens, Gitea
// tokens without read:user) stands for prev.Author, the author of the
// comment created before; with neither, nothing is edited.
func upsertComment(ctx context.Context, api commentAPI, me *selfCache, number int64, prev CommentRef, marker, body string) (CommentRef, error) {
	body = commentBody(body, marker)
	self, err := me.get(ctx, api)
	switch {
	case err != nil && !selfRefused(err):
		return CommentRef{}, err
	case err != nil:
		self = prev.Author
	}
	var all []comment
	if self != 0 {
		if all, err = api.comments(ctx, number); err != nil {
			return CommentRef{}, err
		}
	}
	mine, ok := pickComment(all, self, prev.ID, marker)
	switch {
	case !ok:
		c, err := api.createComment(ctx, number, body)
		if err == nil && c.Author == 0 {
			c.Author = self
		}
		return c, err
	case mine.body == body:
		return CommentRef{ID: mine.id, Author: self}, nil
	}
	return CommentRef{ID: mine.id, Author: self}, api.editComment(ctx, number, mine.id, body)
}

// selfRefused: the forge will not name the token's user to the token (a
// 401/403 or 404 on the user endpoint), which still may comment.
func selfRefused(err error) bool {
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrNotFound)
}

// pickComment finds, among the comments by self, the one with id, else
// the first that carries marker.
func pickComment(all []comment, self, id int64, marker string) (comment, bool) {
	if self == 0 {
		return comment{}, false
	}
	for _, c := range all {
		if c.author == self && id != 0 && c.id == id {
			return c, true
		}
	}
	for _, c := range all {
		if c.author == self && marker != "" && strings.Contains(c.body, marker) {
			return c, true
		}
	}
	return comment{}, false
}

// commentBody is body in valid UTF-8 (as JSON sends it) within
// MaxCommentBytes, cut on a character boundary with cutNote. marker
// survives the cut: it is put first when the cut would lose it.
func commentBody(body, marker string) string {
	body = strings.ToValidUTF8(body, "\uFFFD")
	if out := cutBytes(body, MaxCommentBytes); strings.Contains(out, marker) {
		return out
	}
	return marker + "\n" + cutBytes(body, MaxCommentBytes-len(marker)-1)
}

// cutBytes shortens s to at most limit bytes, ending with cutNote.
func cutBytes(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	keep := max(limit-len(cutNote), 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + cutNote
}
