/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// policy.go: checkURL, the controller's URL policy (file:// and http:// with
// credentials only when allowed).

package source

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// ErrURLNotAllowed is matched (errors.Is) by every *Error of reason
// ReasonURLNotAllowed.
var ErrURLNotAllowed = errors.New("url not allowed")

// checkURL applies the controller's URL policy before anything is sent.
// The protocol is the one go-git will use for the URL (a path without a
// scheme is a local repository, like file://).
//
//   - file:// reads any repository the controller's file system holds,
//     other GitRepositories' checkouts in the shared cache included: only
//     with AllowFileURLs (--allow-file-urls; local and test setups).
//   - http:// with credentials (a Secret, or user:password in the URL)
//     sends them in clear text: only with AllowInsecureHTTP
//     (--allow-insecure-http). Without credentials http:// is allowed, as
//     a public read (docs/operations/limits.md: only http:// with
//     credentials needs the flag); the content is then only as trustworthy
//     as the network.
//   - https:// and ssh:// are always allowed; anything else is refused.
func checkURL(o Options) error {
	ep, err := transport.NewEndpoint(o.URL)
	if err != nil {
		return &Error{Reason: ReasonInvalidSpec, Message: fmt.Sprintf("spec.url is malformed: %s", scrubURLs(err.Error()))}
	}
	u := scrubURLs(o.URL)
	if pu, err := url.Parse(o.URL); err == nil && (pu.RawQuery != "" || pu.Fragment != "" || pu.ForceQuery) {
		// A query becomes part of every request path go-git builds
		// ("?x=/info/refs?service=…"): a way to send chosen requests to
		// any HTTP service the controller reaches.
		return &Error{Reason: ReasonInvalidSpec, Message: fmt.Sprintf("%s: spec.url may not carry a query or fragment", u)}
	}
	switch ep.Protocol {
	case "https", "ssh":
		return nil
	case "file":
		if o.AllowFileURLs {
			return nil
		}
		return &Error{Reason: ReasonURLNotAllowed, sentinel: ErrURLNotAllowed, Message: fmt.Sprintf(
			"%s: file:// URLs are disabled: they read any repository on the controller's file system, other GitRepositories' included; "+
				"use https:// or ssh://, or (local and test setups only) start the controller with --%s", u, FlagAllowFileURLs)}
	case "http":
		if o.AllowInsecureHTTP || (ep.User == "" && ep.Password == "" && o.Auth.method() == nil) {
			return nil
		}
		return &Error{Reason: ReasonURLNotAllowed, sentinel: ErrURLNotAllowed, Message: fmt.Sprintf(
			"%s: http:// with credentials would send them unencrypted: use https://, or (local and test setups only) start the controller with --%s",
			u, FlagAllowInsecureHTTP)}
	}
	return &Error{Reason: ReasonInvalidSpec, Message: fmt.Sprintf("%s: url scheme %q is not supported: use https://, ssh://, http:// or file://", u, ep.Protocol)}
}
