/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func sign(token, body string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestVerifySignature(t *testing.T) {
	const token, body = "webhook-token", `{"ref":"refs/heads/main"}`
	good := sign(token, body)
	for _, tc := range []struct {
		name string
		h    http.Header
		err  error
	}{
		{"github", headers(GitHubSignatureHeader, "sha256="+good), nil},
		{"github without prefix", headers(GitHubSignatureHeader, good), ErrBadSignature},
		{"github bad", headers(GitHubSignatureHeader, "sha256="+sign("other", body)), ErrBadSignature},
		{"github not hex", headers(GitHubSignatureHeader, "sha256=zz"), ErrBadSignature},
		{"gitea", headers(GiteaSignatureHeader, good), nil},
		{"gitea bad", headers(GiteaSignatureHeader, sign(token, body+" ")), ErrBadSignature},
		{"gitea sends both", headers(GiteaSignatureHeader, good, GitHubSignatureHeader, "sha256="+good), nil},
		{"one of two bad", headers(GiteaSignatureHeader, good, GitHubSignatureHeader, "sha256="+sign("x", body)), ErrBadSignature},
		{"gitlab", headers(GitLabTokenHeader, token), nil},
		{"gitlab bad", headers(GitLabTokenHeader, token+"x"), ErrBadSignature},
		{"none", headers(), ErrNoSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifySignature(tc.h, []byte(body), []byte(token))
			if tc.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.err)
				assert.NotContains(t, err.Error(), token)
			}
		})
	}
}

func TestParsePushEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
		body string
		want PushEvent
		err  error
	}{
		{"github", headers(GitHubEventHeader, "push"), `{"ref":"refs/heads/main","after":"abc"}`, PushEvent{Event: "push", Ref: "refs/heads/main", After: "abc"}, nil},
		{"gitea", headers(GiteaEventHeader, "push", GitHubEventHeader, "push"), `{"ref":"refs/tags/v1"}`, PushEvent{Event: "push", Ref: "refs/tags/v1"}, nil},
		{"gitlab", headers(GitLabEventHeader, "Push Hook"), `{"object_kind":"push","ref":"refs/heads/dev"}`, PushEvent{Event: "Push Hook", Ref: "refs/heads/dev"}, nil},
		{"gitlab tag", headers(GitLabEventHeader, "Tag Push Hook"), `{"ref":"refs/tags/v2"}`, PushEvent{Event: "Tag Push Hook", Ref: "refs/tags/v2"}, nil},
		{"github ping", headers(GitHubEventHeader, "ping"), `{}`, PushEvent{}, ErrNotPushEvent},
		{"gitlab merge request", headers(GitLabEventHeader, "Merge Request Hook"), `{}`, PushEvent{}, ErrNotPushEvent},
		{"no event header", headers(), `{"ref":"refs/heads/main"}`, PushEvent{}, ErrNotPushEvent},
		{"not json", headers(GitHubEventHeader, "push"), `ref=main`, PushEvent{}, ErrBadPayload},
		{"no ref", headers(GitHubEventHeader, "push"), `{"after":"x"}`, PushEvent{}, ErrBadPayload},
		{"short ref", headers(GitHubEventHeader, "push"), `{"ref":"main"}`, PushEvent{}, ErrBadPayload},
		{"ref not a string", headers(GitHubEventHeader, "push"), `{"ref":7}`, PushEvent{}, ErrBadPayload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := ParsePushEvent(tc.h, []byte(tc.body))
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, ev)
		})
	}
}

func FuzzParsePushEvent(f *testing.F) {
	for _, s := range []struct{ header, event, body string }{
		{GitHubEventHeader, "push", `{"ref":"refs/heads/main","after":"0123","commits":[{"id":"x"}]}`},
		{GiteaEventHeader, "push", `{"ref":"refs/tags/v1.0.0","before":"0","after":"1"}`},
		{GitLabEventHeader, "Push Hook", `{"object_kind":"push","ref":"refs/heads/dev","checkout_sha":"a"}`},
		{GitLabEventHeader, "Tag Push Hook", `{"ref":"refs/tags/v2"}`},
		{GitHubEventHeader, "ping", `{"zen":"x"}`},
		{GitHubEventHeader, "push", `{"ref":null}`},
		{GitHubEventHeader, "push", `[]`},
		{GitHubEventHeader, "push", ``},
	} {
		f.Add(s.header, s.event, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, header, event string, body []byte) {
		h := http.Header{}
		h.Set(header, event)
		ev, err := ParsePushEvent(h, body)
		if err != nil {
			return
		}
		if !strings.HasPrefix(ev.Ref, "refs/") || len(ev.Ref) > 1024 {
			t.Fatalf("accepted ref %q", ev.Ref)
		}
		switch ev.Event {
		case "push", "Push Hook", "Tag Push Hook":
		default:
			t.Fatalf("accepted event %q", ev.Event)
		}
	})
}

func TestParsePullRequestEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
		body string
		want PullRequestEvent
		err  error
	}{
		{"github", headers(GitHubEventHeader, "pull_request"), `{"action":"synchronize","number":7,"pull_request":{"base":{"ref":"main"}}}`,
			PullRequestEvent{Event: "pull_request", Action: "synchronize", Number: 7, Base: "main"}, nil},
		{"gitea", headers(GiteaEventHeader, "pull_request", "X-Gitea-Event-Type", "pull_request_label", GitHubEventHeader, "pull_request"),
			`{"action":"label_updated","number":3,"pull_request":{"base":{"ref":"dev"}}}`,
			PullRequestEvent{Event: "pull_request", Action: "label_updated", Number: 3, Base: "dev"}, nil},
		{"gitlab", headers(GitLabEventHeader, "Merge Request Hook"), `{"object_kind":"merge_request","object_attributes":{"iid":9,"action":"update","target_branch":"main"}}`,
			PullRequestEvent{Event: "Merge Request Hook", Action: "update", Number: 9, Base: "main"}, nil},
		{"push", headers(GitHubEventHeader, "push"), `{"ref":"refs/heads/main"}`, PullRequestEvent{}, ErrNotPullRequestEvent},
		{"no event header", headers(), `{}`, PullRequestEvent{}, ErrNotPullRequestEvent},
		{"not json", headers(GitHubEventHeader, "pull_request"), `action=opened`, PullRequestEvent{}, ErrBadPayload},
		{"no base", headers(GitHubEventHeader, "pull_request"), `{"action":"opened","number":1}`, PullRequestEvent{}, ErrBadPayload},
		{"gitlab shape on github", headers(GitHubEventHeader, "pull_request"), `{"object_attributes":{"target_branch":"main"}}`, PullRequestEvent{}, ErrBadPayload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := ParsePullRequestEvent(tc.h, []byte(tc.body))
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, ev)
		})
	}
}

func FuzzParsePullRequestEvent(f *testing.F) {
	for _, s := range []struct{ header, event, body string }{
		{GitHubEventHeader, "pull_request", `{"action":"opened","number":1,"pull_request":{"base":{"ref":"main"},"head":{"sha":"a"}}}`},
		{GiteaEventHeader, "pull_request", `{"action":"synchronized","number":2,"pull_request":{"base":{"ref":"main"}}}`},
		{GitLabEventHeader, "Merge Request Hook", `{"object_attributes":{"iid":3,"action":"open","target_branch":"main"}}`},
		{GitHubEventHeader, "pull_request", `{"pull_request":null}`},
		{GitHubEventHeader, "pull_request", `[]`},
	} {
		f.Add(s.header, s.event, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, header, event string, body []byte) {
		h := http.Header{}
		h.Set(header, event)
		ev, err := ParsePullRequestEvent(h, body)
		if err != nil {
			return
		}
		if ev.Base == "" || len(ev.Base) > 1024 || (ev.Event != "pull_request" && ev.Event != "Merge Request Hook") {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

func TestPlansFor(t *testing.T) {
	type R = v1alpha1.GitRepositoryRef
	ev := func(action, base string) PullRequestEvent { return PullRequestEvent{Action: action, Base: base} }
	for _, tc := range []struct {
		ref  R
		ev   PullRequestEvent
		want bool
	}{
		{R{Branch: "main"}, ev("opened", "main"), true},
		{R{Branch: "main"}, ev("synchronize", "main"), true},
		{R{Branch: "main"}, ev("synchronized", "main"), true},
		{R{Branch: "main"}, ev("update", "main"), true},
		{R{Branch: "main"}, ev("closed", "main"), true},
		{R{Branch: "main"}, ev("unlabeled", "main"), true},
		{R{Branch: "main"}, ev("opened", "dev"), false},
		{R{Branch: "main"}, ev("assigned", "main"), false},
		{R{Branch: "main"}, ev("review_requested", "main"), false},
		{R{Tag: "v1"}, ev("opened", "main"), false},
	} {
		assert.Equal(t, tc.want, PlansFor(tc.ref, tc.ev), "%+v %+v", tc.ref, tc.ev)
	}
}

func TestConcerns(t *testing.T) {
	type R = v1alpha1.GitRepositoryRef
	for _, tc := range []struct {
		ref    R
		pushed string
		want   bool
	}{
		{R{}, "refs/heads/main", true},
		{R{Branch: "main"}, "refs/heads/main", true},
		{R{Branch: "main"}, "refs/heads/main2", false},
		{R{Branch: "main"}, "refs/tags/main", false},
		{R{Tag: "v1"}, "refs/tags/v1", true},
		{R{Tag: "v1"}, "refs/tags/v2", true},
		{R{Tag: "v1"}, "refs/heads/v1", false},
		{R{SemVer: "^1"}, "refs/tags/v1.4.0", true},
		{R{SemVer: "^1"}, "refs/heads/main", false},
		{R{Commit: sha}, "refs/heads/main", false},
		{R{Name: "refs/pull/7/head"}, "refs/pull/7/head", true},
		{R{Name: "refs/pull/7/head"}, "refs/pull/8/head", false},
	} {
		assert.Equal(t, tc.want, Concerns(tc.ref, tc.pushed), "%+v %s", tc.ref, tc.pushed)
	}
}

func TestWebhookPath(t *testing.T) {
	p := WebhookPath([]byte("tok"), "ns", "app")
	assert.Regexp(t, `^/hook/[0-9a-f]{64}$`, p)
	assert.Equal(t, p, WebhookPath([]byte("tok"), "ns", "app"), "stable")
	assert.NotEqual(t, p, WebhookPath([]byte("tok2"), "ns", "app"))
	assert.NotEqual(t, p, WebhookPath([]byte("tok"), "ns2", "app"))
	assert.NotEqual(t, p, WebhookPath([]byte("tok"), "ns", "app2"))
	assert.NotContains(t, p, "tok")
}
