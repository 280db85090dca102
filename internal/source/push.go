/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// push.go: forge webhooks — ParsePushEvent, ParsePullRequestEvent,
// VerifySignature, Concerns (whether a push can move the watched ref),
// PlansFor (whether a pull-request event changes a plan) and WebhookPath.

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

// Errors of ParsePushEvent, ParsePullRequestEvent and VerifySignature.
var (
	ErrNotPushEvent        = errors.New("not a push event")
	ErrNotPullRequestEvent = errors.New("not a pull request event")
	ErrBadPayload          = errors.New("malformed webhook payload")
	ErrNoSignature         = errors.New("no signature header (X-Hub-Signature-256, X-Gitea-Signature or X-Gitlab-Token)")
	ErrBadSignature        = errors.New("signature does not match the webhook secret")
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

// PullRequestEvent is the part of a forge pull-request event the
// receiver needs.
type PullRequestEvent struct {
	// Event is the event header's value: "pull_request" or "Merge Request
	// Hook".
	Event string
	// Action is what happened: "opened", "synchronize" (GitHub),
	// "synchronized" (Gitea), "update" (GitLab), ….
	Action string
	// Number is the pull request's number (GitLab: the iid).
	Number int64
	// Base is the branch the pull request merges into.
	Base string
}

// gitlabMergeRequestEvent is GitLab's event header value.
const gitlabMergeRequestEvent = "Merge Request Hook"

// IsPullRequestEvent reports a pull-request event by its header: GitHub's
// and Gitea's "pull_request" (Gitea sends it for its sync, label, assign
// and milestone events too, naming them in X-Gitea-Event-Type), GitLab's
// "Merge Request Hook".
func IsPullRequestEvent(h http.Header) bool {
	ev := eventName(h)
	return ev == "pull_request" || ev == gitlabMergeRequestEvent
}

// ParsePullRequestEvent reads a GitHub, Gitea or GitLab pull-request
// event. It does not verify the signature (see VerifySignature).
func ParsePullRequestEvent(h http.Header, body []byte) (PullRequestEvent, error) {
	ev := eventName(h)
	if !IsPullRequestEvent(h) {
		return PullRequestEvent{Event: ev}, fmt.Errorf("%w: %q", ErrNotPullRequestEvent, truncate(ev, 64))
	}
	var p struct {
		Action      string `json:"action"`
		Number      int64  `json:"number"`
		PullRequest struct {
			Base struct {
				Ref string `json:"ref"`
			} `json:"base"`
		} `json:"pull_request"`
		ObjectAttributes struct {
			IID          int64  `json:"iid"`
			Action       string `json:"action"`
			TargetBranch string `json:"target_branch"`
		} `json:"object_attributes"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return PullRequestEvent{Event: ev}, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	out := PullRequestEvent{Event: ev, Action: p.Action, Number: p.Number, Base: p.PullRequest.Base.Ref}
	if ev == gitlabMergeRequestEvent {
		a := p.ObjectAttributes
		out = PullRequestEvent{Event: ev, Action: a.Action, Number: a.IID, Base: a.TargetBranch}
	}
	if out.Base == "" || len(out.Base) > 1024 {
		return PullRequestEvent{Event: ev}, fmt.Errorf("%w: no base branch", ErrBadPayload)
	}
	return out, nil
}

// planActions are the pull-request actions that change what a plan shows
// or whether there is one: the head moved, the pull request opened or
// closed, its title, base or labels changed.
var planActions = map[string]bool{
	// GitHub and Gitea.
	"opened": true, "reopened": true, "closed": true, "edited": true,
	// GitHub.
	"synchronize": true, "labeled": true, "unlabeled": true,
	// Gitea.
	"synchronized": true, "label_updated": true, "label_cleared": true,
	// GitLab (object_attributes.action; "update" covers pushes and labels).
	"open": true, "reopen": true, "update": true, "close": true, "merge": true,
}

// PlansFor reports whether a pull-request event changes the plans of a
// GitRepository following ref: an action in planActions on a pull request
// into ref's branch.
func PlansFor(ref v1alpha1.GitRepositoryRef, ev PullRequestEvent) bool {
	return planActions[ev.Action] && ref.Branch != "" && ev.Base == ref.Branch
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
