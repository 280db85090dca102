/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// provider.go: NewProvider, which picks the forge client for a
// spec.commitStatus, and CheckAddress, which vets the forge address before a
// token is sent to it.

package status

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Provider names, as in spec.commitStatus.provider.
const (
	ProviderGitea  = "gitea"
	ProviderGitHub = "github"
	ProviderGitLab = "gitlab"
)

// requestTimeout bounds each forge call when the caller's client has none,
// so a hanging forge cannot hold a reconcile worker.
const requestTimeout = 30 * time.Second

// ErrInsecureAddress: the forge address would carry the token in clear
// text (http://) while that is not allowed, or is not a plain root URL.
var ErrInsecureAddress = errors.New("forge address refused")

// Options of NewProvider.
type Options struct {
	// HTTP talks to the forge; a client with a 30 s timeout when nil.
	HTTP *http.Client
	// AllowInsecureHTTP accepts an http:// address, over which the token
	// travels in clear text: a forge on the loopback in tests and the
	// demo (the controller's --allow-insecure-http). Never by default.
	AllowInsecureHTTP bool
}

// NewProvider returns the provider for spec. The token comes from the
// Secret named in spec.secretRef. The address is checked (CheckAddress)
// before anything is sent, and a redirect never downgrades to http://.
func NewProvider(spec v1alpha1.CommitStatusSpec, token string, o Options) (Provider, error) {
	address, httpClient, err := forgeHTTP(spec, o)
	if err != nil {
		return nil, err
	}
	switch spec.Provider {
	case ProviderGitea:
		return newGitea(address, spec.Repository, token, httpClient)
	case ProviderGitHub:
		return newGitHub(address, spec.Repository, token, httpClient)
	case ProviderGitLab:
		return newGitLab(address, spec.Repository, token, httpClient)
	}
	return nil, unknownProvider(spec.Provider)
}

func unknownProvider(name string) error {
	return fmt.Errorf("unknown commit status provider %q (want gitea, github or gitlab)", name)
}

// forgeHTTP checks spec's address and returns it without a trailing slash,
// with the HTTP client every forge call goes through: a timeout, no
// redirect to http:// (unless allowed), and answers bounded to
// maxForgeBody bytes.
func forgeHTTP(spec v1alpha1.CommitStatusSpec, o Options) (string, *http.Client, error) {
	if err := CheckAddress(spec.Address, o.AllowInsecureHTTP); err != nil {
		return "", nil, err
	}
	httpClient := &http.Client{Timeout: requestTimeout}
	if o.HTTP != nil {
		c := *o.HTTP
		httpClient = &c
	}
	next := httpClient.CheckRedirect
	httpClient.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "https" && !o.AllowInsecureHTTP {
			return fmt.Errorf("%w: redirect to %s://%s not followed", ErrInsecureAddress, req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	httpClient.Transport = boundedTransport{next: httpClient.Transport}
	return strings.TrimSuffix(spec.Address, "/"), httpClient, nil
}

// CheckAddress accepts the root URL of a forge: https:// (http:// only
// with allowInsecureHTTP), a host, an optional path, and nothing that
// could smuggle the token elsewhere or steer the API path: no user
// information, query (not even an empty one: a trailing "?" would turn
// the provider's API path into a query string) or fragment. An empty
// address is the provider's default (https).
func CheckAddress(address string, allowInsecureHTTP bool) error {
	if address == "" {
		return nil
	}
	u, err := url.Parse(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not a URL", ErrInsecureAddress, address)
	}
	switch {
	case u.Scheme == "http" && !allowInsecureHTTP:
		return fmt.Errorf("%w: %s would send the token in clear text; use https:// (http:// needs the controller's --allow-insecure-http)", ErrInsecureAddress, redactURL(u))
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("%w: %s: want https://", ErrInsecureAddress, redactURL(u))
	case u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%w: %s: no host", ErrInsecureAddress, redactURL(u))
	case u.User != nil:
		return fmt.Errorf("%w: %s: user information in the address", ErrInsecureAddress, redactURL(u))
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(address, "?"):
		return fmt.Errorf("%w: %s: a query in the address", ErrInsecureAddress, redactURL(u))
	case u.Fragment != "" || strings.Contains(address, "#"):
		return fmt.Errorf("%w: %s: a fragment in the address", ErrInsecureAddress, redactURL(u))
	}
	return nil
}

// redactURL names scheme, host and path, never user information or query.
func redactURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// ownerRepo splits "owner/name".
func ownerRepo(repository string) (string, string, error) {
	owner, name, ok := strings.Cut(repository, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("repository %q: want owner/name", repository)
	}
	return owner, name, nil
}

// forgeNamer is implemented by this package's providers so Sync can apply
// the forge's description limit before comparing and posting.
type forgeNamer interface{ forge() string }

func forgeOf(p Provider) string {
	if f, ok := p.(forgeNamer); ok {
		return f.forge()
	}
	return ""
}
