/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"fmt"
	"net/http"
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

// NewProvider returns the provider for spec. The token comes from the
// Secret named in spec.secretRef; httpClient may be nil.
func NewProvider(spec v1alpha1.CommitStatusSpec, token string, httpClient *http.Client) (Provider, error) {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: requestTimeout}
	}
	address := strings.TrimSuffix(spec.Address, "/")
	switch spec.Provider {
	case ProviderGitea:
		return newGitea(address, spec.Repository, token, httpClient)
	case ProviderGitHub:
		return newGitHub(address, spec.Repository, token, httpClient)
	case ProviderGitLab:
		return newGitLab(address, spec.Repository, token, httpClient)
	}
	return nil, fmt.Errorf("unknown commit status provider %q (want gitea, github or gitlab)", spec.Provider)
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
