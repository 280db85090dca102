/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// fakeForge is an httptest stand-in for GitHub or GitLab (neither can run
// here). It checks each request against the documented API, keeps the
// statuses it accepted, and can be told to answer the next requests with
// an error instead.
type fakeForge struct {
	t       *testing.T
	srv     *httptest.Server
	prefix  string // "/api/v3", "" (api.github.com) or "/api/v4"
	project string // GitHub owner/repo, or GitLab project id as sent (escaped)

	mu       sync.Mutex
	statuses map[string][]Entry // sha → statuses, oldest first
	posts    int
	failures []cannedResponse
}

type cannedResponse struct {
	code   int
	header map[string]string
	body   string
}

func newFakeForge(t *testing.T, prefix, project string, handler func(*fakeForge, http.ResponseWriter, *http.Request)) *fakeForge {
	f := &fakeForge{t: t, prefix: prefix, project: project, statuses: map[string][]Entry{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.canned(w) {
			return
		}
		handler(f, w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// failNext makes the next request(s) answer with these responses.
func (f *fakeForge) failNext(rs ...cannedResponse) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, rs...)
}

func (f *fakeForge) canned(w http.ResponseWriter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.failures) == 0 {
		return false
	}
	c := f.failures[0]
	f.failures = f.failures[1:]
	for k, v := range c.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(c.code)
	fmt.Fprint(w, c.body)
	return true
}

func (f *fakeForge) add(sha string, s Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses[sha] = append(f.statuses[sha], s)
	f.posts++
}

// latest returns the newest status per context, newest context first.
func (f *fakeForge) latest(sha string) []Entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var out []Entry
	all := f.statuses[sha]
	for i := len(all) - 1; i >= 0; i-- {
		if !seen[all[i].Context] {
			seen[all[i].Context] = true
			out = append(out, all[i])
		}
	}
	return out
}

func (f *fakeForge) postCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts
}

// fail reports a request that breaks the documented API contract.
func (f *fakeForge) fail(w http.ResponseWriter, format string, args ...any) {
	f.t.Errorf("fake forge: "+format, args...)
	http.Error(w, "test forge: bad request", http.StatusBadRequest)
}

// decodeStrict decodes a JSON body, rejecting fields the API does not define.
func decodeStrict(r *http.Request, v any) error {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return err
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// page serves items two at a time so clients must follow pagination.
func page[T any](items []T, r *http.Request) (chunk []T, next int) {
	const size = 2
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if p < 1 {
		p = 1
	}
	lo := (p - 1) * size
	if lo >= len(items) {
		return []T{}, 0
	}
	hi := min(lo+size, len(items))
	if hi < len(items) {
		next = p + 1
	}
	return items[lo:hi], next
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func shaFromPath(path, before, after string) (string, bool) {
	rest, ok := strings.CutPrefix(path, before)
	if !ok {
		return "", false
	}
	sha, ok := strings.CutSuffix(rest, after)
	return sha, ok && sha != "" && !strings.Contains(sha, "/")
}
