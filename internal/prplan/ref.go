/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// ref.go: HeadRef, the ref that fetches a pull request's head.

package prplan

import (
	"strconv"
	"strings"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// HeadRef is the ref that fetches pull request n's head from the
// GitRepository's repository: spec.pullRequests.refPattern with n for its
// '*', else GitLab's refs/merge-requests/n/head for a gitlab commit-status
// provider, else refs/pull/n/head (GitHub, Gitea).
func HeadRef(gr *v1alpha1.GitRepository, n int64) string {
	num := strconv.FormatInt(n, 10)
	if pr := gr.Spec.PullRequests; pr != nil && pr.RefPattern != "" {
		return strings.Replace(pr.RefPattern, "*", num, 1)
	}
	if cs := gr.Spec.CommitStatus; cs != nil && cs.Provider == "gitlab" {
		return "refs/merge-requests/" + num + "/head"
	}
	return "refs/pull/" + num + "/head"
}
