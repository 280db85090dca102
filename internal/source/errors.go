/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// errors.go: Error, a fetch failure with a message safe to show and a reason
// usable as a condition reason, and the classification of go-git errors.

package source

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// Reasons of a fetch Error, usable as condition reasons.
const (
	ReasonAuthenticationFailed = "AuthenticationFailed"
	ReasonHostKeyUnknown       = "HostKeyUnknown"
	ReasonHostKeyChanged       = "HostKeyChanged"
	ReasonUnreachable          = "Unreachable"
	ReasonTimeout              = "Timeout"
	ReasonTLS                  = "TLSError"
	ReasonRepositoryNotFound   = "RepositoryNotFound"
	ReasonRefNotFound          = "RefNotFound"
	ReasonInvalidRef           = "InvalidRef"
	ReasonInvalidSpec          = "InvalidSpec"
	ReasonGitFailed            = "GitOperationFailed"
	// ReasonLimitExceeded: the repository does not fit a limit of Limits;
	// the message names the limit, its value and its flag.
	ReasonLimitExceeded = "LimitExceeded"
	// ReasonURLNotAllowed: the URL policy refuses spec.url (file://, or
	// http:// with credentials); the message names the flag that allows it.
	ReasonURLNotAllowed = "URLNotAllowed"
	// ReasonRedirected: the server answered with a redirect, which is
	// never followed; the message names where to.
	ReasonRedirected = "Redirected"
)

// Error is a fetch failure with a message a user can act on. The message
// never holds a password, token or URL userinfo; the raw go-git error is
// deliberately not kept, since it may.
type Error struct {
	// Reason is one of the Reason constants.
	Reason string
	// Message is the scrubbed, user-facing text.
	Message string
	// sentinel lets errors.Is match go-git's sentinels and ErrRefNotFound.
	sentinel error
}

func (e *Error) Error() string { return e.Message }

// SafeURL is url as messages show it: without userinfo.
func SafeURL(url string) string { return scrubURLs(url) }

// NewError is an Error made elsewhere (a fetch that ran in a worker
// process), matching errors.Is the sentinel given (nil: none).
func NewError(reason, message string, sentinel error) *Error {
	return &Error{Reason: reason, Message: message, sentinel: sentinel}
}

// Sentinel is what e matches with errors.Is, nil when nothing.
func (e *Error) Sentinel() error { return e.sentinel }

func (e *Error) Unwrap() error { return e.sentinel }

// Terminal reports whether retrying at once cannot help: the spec, what
// the remote holds or the controller's flags must change first (the
// reconciler looks again at the next poll, when a push may have fixed a
// ref or shrunk the repository).
func (e *Error) Terminal() bool {
	switch e.Reason {
	case ReasonInvalidRef, ReasonInvalidSpec, ReasonLimitExceeded, ReasonURLNotAllowed:
		return true
	}
	return false
}

// describe turns a go-git error into an Error. op says what was being done
// ("listing refs of", "fetching").
func describe(err error, o Options, op string) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	u := scrubURLs(o.URL)
	reason, msg, sentinel := classify(goGitCause(err), o, u)
	if msg == "" {
		msg = fmt.Sprintf("%s %s: %v", op, u, err)
	}
	return &Error{Reason: reason, Message: o.Auth.scrub(msg), sentinel: sentinel}
}

// goGitCause is the error go-git wrapped in one of its types without an
// Unwrap method (a timeout during the download reaches us as
// "unexpected client error: … context deadline exceeded").
func goGitCause(err error) error {
	var ue *plumbing.UnexpectedError
	var pe *plumbing.PermanentError
	switch {
	case errors.As(err, &ue) && ue.Err != nil:
		return ue.Err
	case errors.As(err, &pe) && pe.Err != nil:
		return pe.Err
	}
	return err
}

func classify(err error, o Options, u string) (reason, msg string, sentinel error) {
	var hk *HostKeyError
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	var hn x509.HostnameError
	var redirect *redirectError
	switch {
	case errors.As(err, &redirect):
		return ReasonRedirected, fmt.Sprintf("%s redirected to %s, and redirects are not followed: set spec.url to the repository's own address", u, redirect.To), nil
	case errors.As(err, &hk) && hk.Changed:
		return ReasonHostKeyChanged, hk.Error(), nil
	case errors.As(err, &hk):
		return ReasonHostKeyUnknown, hk.Error(), nil
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout, fmt.Sprintf("%s did not answer within spec.timeout (%s): check the network, or raise spec.timeout", u, timeoutOf(o)), context.DeadlineExceeded
	case errors.Is(err, transport.ErrAuthenticationRequired):
		return ReasonAuthenticationFailed, authMsg(o, u), transport.ErrAuthenticationRequired
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return ReasonAuthenticationFailed, fmt.Sprintf("authorization failed for %s: the credentials in %s may not read this repository", u, o.Auth.secretDesc()), transport.ErrAuthorizationFailed
	case sshAuthFailed(err):
		return ReasonAuthenticationFailed, fmt.Sprintf("SSH authentication to %s failed: check identity (and the user in the url) in %s", u, o.Auth.secretDesc()), transport.ErrAuthenticationRequired
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return ReasonRepositoryNotFound, fmt.Sprintf("repository %s not found (or the credentials cannot see it): check spec.url", u), transport.ErrRepositoryNotFound
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return ReasonRefNotFound, fmt.Sprintf("repository %s is empty: push a commit first", u), ErrRefNotFound
	case errors.As(err, &ua), errors.As(err, &ci), errors.As(err, &hn):
		return ReasonTLS, fmt.Sprintf("the TLS certificate of %s is not trusted: %v; put the CA bundle under caFile in %s", u, err, o.Auth.secretDesc()), nil
	case isUnreachable(err):
		return ReasonUnreachable, fmt.Sprintf("cannot connect to %s: %v; check spec.url and that the server is up", u, rootCause(err)), nil
	}
	return ReasonGitFailed, "", nil
}

// sshAuthFailed: golang.org/x/crypto/ssh reports a refused key with a
// plain fmt.Errorf ("ssh: unable to authenticate, attempted methods …"),
// no type or sentinel, so it is the one fetch error classified by text.
func sshAuthFailed(err error) bool {
	return strings.Contains(err.Error(), "unable to authenticate")
}

func authMsg(o Options, u string) string {
	if o.Auth.method() == nil {
		return fmt.Sprintf("authentication required by %s: set spec.secretRef to a Secret with username/password or bearerToken", u)
	}
	return fmt.Sprintf("authentication failed for %s: check the username/password or bearerToken in %s", u, o.Auth.secretDesc())
}

func isUnreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) || errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

// rootCause is the innermost error, e.g. "connect: connection refused".
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func timeoutOf(o Options) string {
	if o.Timeout > 0 {
		return o.Timeout.String()
	}
	return "default"
}

func refError(err error) error {
	if errors.Is(err, ErrRefNotFound) {
		return &Error{Reason: ReasonRefNotFound, Message: err.Error(), sentinel: ErrRefNotFound}
	}
	return &Error{Reason: ReasonInvalidRef, Message: err.Error()}
}
