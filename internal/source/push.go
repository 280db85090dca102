/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// push.go: forge push webhooks — ParsePushEvent, VerifySignature, Concerns
// (whether a push can move the watched ref) and WebhookPath.

package source

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Forge event and signature headers.
const (
	GitHubEventHeader     = "X-GitHub-Event"
	GitHubSignatureHeader = "X-Hub-Signature-256"
	GiteaEventHeader      = "X-Gitea-Event"
	GiteaSignatureHeader  = "X-Gitea-Signature"
	GitLabEventHeader     = "X-Gitlab-Event"
	GitLabTokenHeader     = "X-Gitlab-Token"
)

// Errors of ParsePushEvent and VerifySignature.
var (
	ErrNotPushEvent = errors.New("not a push event")
	ErrBadPayload   = errors.New("malformed push payload")
	ErrNoSignature  = errors.New("no signature header (X-Hub-Signature-256, X-Gitea-Signature or X-Gitlab-Token)")
	ErrBadSignature = errors.New("signature does not match the webhook secret")
)

// PushEvent is the part of a forge push event the receiver needs.
type PushEvent struct {
	// Event is the event header's value, e.g. "push" or "Push Hook".
	Event string
	// Ref is the full ref pushed, refs/heads/<branch> or refs/tags/<tag>.
	Ref string
	// After is the new commit ("0000…" for a deletion), when given.
	After string
}

// ParsePushEvent reads a GitHub, Gitea or GitLab push event. It does not
// verify the signature (see VerifySignature). GitLab tag pushes ("Tag Push
// Hook") count as pushes, since a tag or semver ref is watched by them.
func ParsePushEvent(h http.Header, body []byte) (PushEvent, error) {
	ev := eventName(h)
	switch ev {
	case "push", "Push Hook", "Tag Push Hook":
	case "":
		return PushEvent{}, fmt.Errorf("%w: no event header", ErrNotPushEvent)
	default:
		return PushEvent{Event: ev}, fmt.Errorf("%w: %q", ErrNotPushEvent, truncate(ev, 64))
	}
	var p struct {
		Ref   string `json:"ref"`
		After string `json:"after"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return PushEvent{Event: ev}, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	if !strings.HasPrefix(p.Ref, "refs/") || len(p.Ref) > 1024 {
		return PushEvent{Event: ev}, fmt.Errorf("%w: ref %q is not a full ref name", ErrBadPayload, truncate(p.Ref, 64))
	}
	return PushEvent{Event: ev, Ref: p.Ref, After: p.After}, nil
}

// eventName prefers Gitea's header: Gitea also sends X-GitHub-Event.
func eventName(h http.Header) string {
	for _, k := range []string{GiteaEventHeader, GitHubEventHeader, GitLabEventHeader} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// VerifySignature checks every signature header present against token, in
// constant time; at least one must be present.
func VerifySignature(h http.Header, body, token []byte) error {
	if err := verifyToken(h, token); err != nil {
		return err
	}
	mac := hmac.New(sha256.New, token)
	mac.Write(body)
	return verifyMAC(h, mac.Sum(nil))
}

// verifyToken is the part of VerifySignature that needs no body: a
// signature header is present, and GitLab's plain token, if sent, matches.
// The Receiver calls it before it reads a body.
func verifyToken(h http.Header, token []byte) error {
	if h.Get(GitHubSignatureHeader) == "" && h.Get(GiteaSignatureHeader) == "" && h.Get(GitLabTokenHeader) == "" {
		return ErrNoSignature
	}
	if v := h.Get(GitLabTokenHeader); v != "" && subtle.ConstantTimeCompare([]byte(v), token) != 1 {
		return ErrBadSignature
	}
	return nil
}

// verifyMAC checks the HMAC signature headers present against want, the
// HMAC-SHA256 of the body keyed by the token.
func verifyMAC(h http.Header, want []byte) error {
	if v := h.Get(GitHubSignatureHeader); v != "" {
		hexSig, ok := strings.CutPrefix(v, "sha256=")
		if !ok || !hmacEqual(hexSig, want) {
			return ErrBadSignature
		}
	}
	if v := h.Get(GiteaSignatureHeader); v != "" && !hmacEqual(v, want) {
		return ErrBadSignature
	}
	return nil
}

func hmacEqual(hexSig string, want []byte) bool {
	got, err := hex.DecodeString(hexSig)
	return err == nil && hmac.Equal(got, want)
}

// Concerns reports whether a push of pushedRef can change what ref
// resolves to: the same branch, any tag for tag and semver refs (a tag
// may be created, moved or become the highest match), the same ref for
// name refs, never for commits.
func Concerns(ref v1alpha1.GitRepositoryRef, pushedRef string) bool {
	switch {
	case ref.Commit != "":
		return false
	case ref.Tag != "", ref.SemVer != "":
		return strings.HasPrefix(pushedRef, "refs/tags/")
	case ref.Name != "":
		return pushedRef == ref.Name
	default:
		b := ref.Branch
		if b == "" {
			b = v1alpha1.DefaultBranch
		}
		return pushedRef == "refs/heads/"+b
	}
}

// WebhookPath is the receiver path of a GitRepository's push webhooks:
// an HMAC of the namespace and name keyed by the webhook secret, so it
// cannot be guessed without the secret and changes when the secret does.
func WebhookPath(token []byte, namespace, name string) string {
	mac := hmac.New(sha256.New, token)
	mac.Write([]byte(namespace + "/" + name))
	return WebhookPathPrefix + hex.EncodeToString(mac.Sum(nil))
}

// WebhookPathPrefix is the path prefix the Receiver serves.
const WebhookPathPrefix = "/hook/"
