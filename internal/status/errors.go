/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// errors.go: the forge errors (ErrUnauthorized, ErrNotFound,
// RateLimitedError), the classification of a non-2xx answer, and forge text
// made safe to show.

package status

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

var (
	// ErrUnauthorized: the token is missing, wrong, expired or lacks the
	// scope to write statuses (HTTP 401, or 403 without rate limiting).
	ErrUnauthorized = errors.New("forge rejected the token")
	// ErrNotFound: the repository or commit does not exist, or the token
	// cannot see it (HTTP 404).
	ErrNotFound = errors.New("repository or commit not found")
)

// RateLimitedError says the forge throttled us; retry after RetryAfter.
type RateLimitedError struct {
	RetryAfter time.Duration
	Message    string
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("rate limited, retry after %s: %s", e.RetryAfter.Round(time.Second), e.Message)
}

// defaultRetryAfter is used when a throttled response names no time.
const defaultRetryAfter = time.Minute

// classify turns a non-2xx response into one of the package's errors. msg
// is the forge's message, as the forge wrote it: classify scrubs it
// (forgeText) with token, the one the request carried.
func classify(code int, h http.Header, msg, token string, now time.Time) error {
	msg = forgeText(msg, token)
	if wait, limited := rateLimited(code, h, now); limited {
		return &RateLimitedError{RetryAfter: wait, Message: fmt.Sprintf("HTTP %d %s", code, msg)}
	}
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%w: HTTP %d %s", ErrUnauthorized, code, msg)
	case http.StatusNotFound:
		return fmt.Errorf("%w: HTTP %d %s", ErrNotFound, code, msg)
	}
	return &codeError{code: code, msg: msg}
}

// codeError is any other non-2xx answer.
type codeError struct {
	code int
	msg  string
}

func (e *codeError) Error() string { return fmt.Sprintf("HTTP %d %s", e.code, e.msg) }

// rejected reports an answer that says the forge did not store what was
// posted: a 4xx (a rate limit, a token it refuses, a repository or commit
// it does not know, a status it will not take). A transport error, a
// timeout or a 5xx leaves it unknown.
func rejected(err error) bool {
	var rl *RateLimitedError
	var ce *codeError
	switch {
	case errors.As(err, &rl), errors.Is(err, ErrUnauthorized), errors.Is(err, ErrNotFound):
		return true
	case errors.As(err, &ce):
		return ce.code < 500
	}
	return false
}

// rateLimited recognises 429, and 403 with an exhausted quota or a
// Retry-After (GitHub's primary and secondary limits).
func rateLimited(code int, h http.Header, now time.Time) (time.Duration, bool) {
	exhausted := h.Get("X-RateLimit-Remaining") == "0" || h.Get("RateLimit-Remaining") == "0"
	switch {
	case code == http.StatusTooManyRequests:
	case code == http.StatusForbidden && (exhausted || h.Get("Retry-After") != ""):
	default:
		return 0, false
	}
	return retryAfter(h, now), true
}

// retryAfter reads Retry-After (seconds or HTTP date), then the reset time
// (X-RateLimit-Reset on GitHub, RateLimit-Reset on GitLab: epoch seconds).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After"); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			return positive(time.Duration(secs) * time.Second)
		}
		if t, err := http.ParseTime(v); err == nil {
			return positive(t.Sub(now))
		}
	}
	for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if epoch, err := strconv.ParseInt(h.Get(k), 10, 64); err == nil {
			return positive(time.Unix(epoch, 0).Sub(now))
		}
	}
	return defaultRetryAfter
}

func positive(d time.Duration) time.Duration {
	if d < time.Second {
		return time.Second
	}
	return d
}

// maxForgeText bounds the forge's own words in an error, and so in a
// condition, an event and a log line: a forge's error message is a line,
// and the address may be any service the tenant names, whose error page
// must not come back whole.
const maxForgeText = 200

// forgeText is a forge's message made safe to show: the token removed
// (before cutting, so that no part of it survives a cut), control
// characters and runs of white space folded into one space, and at most
// maxForgeText characters.
func forgeText(msg, token string) string {
	msg = redact(msg, token)
	msg = strings.Join(strings.FieldsFunc(msg, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	return truncateRunes(string([]rune(msg)), maxForgeText)
}

// redact removes the token from a message that may echo request data.
func redact(msg, token string) string {
	if token == "" {
		return msg
	}
	return strings.ReplaceAll(msg, token, "***")
}
